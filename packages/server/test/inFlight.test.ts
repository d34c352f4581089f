/**
 * Outgoing transfers in flight under SIGKILL: an embedded engine process (`inflight/engine.ts`:
 * the engine on SQLite with the BIND adapter) pays out N merchants through a `BindSimulator`
 * that keeps every transfer pending and times out on some sends after applying them. The process
 * is killed with SIGKILL while transfers are in flight; the bank then completes most and fails
 * a few; a new process settles them. Afterwards each transfer is in the simulator's books once,
 * every payout is settled once (SUCCESS, or FAILED with its money back and one "payout.failed"
 * event), and `cobro ledger verify` passes on the database.
 */
import { describe, expect, it } from "vitest"
import { OriginId } from "@cobro/bank-bind"
import { BindSimulator } from "@cobro/bank-bind/testing"
import Database from "better-sqlite3"
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { execCobro, kill9, stop } from "./support.js"

const MERCHANTS = 12
const script = fileURLToPath(new URL("./inflight/engine.ts", import.meta.url))

interface Engine {
  readonly child: ChildProcess
  readonly output: () => string
}

const startEngine = (mode: "seed" | "run", env: Record<string, string>): Engine => {
  const child = spawn(process.execPath, ["--conditions=@cobro/source", "--import", "tsx", script, mode], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()))
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()))
  return { child, output: () => out }
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.on("exit", (code) => resolve(code))
  )

const until = async (what: string, engine: Engine, check: () => boolean, timeout = 60_000) => {
  const deadline = Date.now() + timeout
  while (Date.now() < deadline) {
    if (check()) return
    if (engine.child.exitCode !== null) break
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`${what}: not reached\n${engine.output().slice(-3000)}`)
}

const rows = <A>(file: string, query: string): ReadonlyArray<A> => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    return db.prepare(query).all() as ReadonlyArray<A>
  } finally {
    db.close()
  }
}

describe("outgoing transfers in flight", () => {
  it("kill -9 while transfers are in flight (some sends timed out after applying): settled once each after restart", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-inflight-"))
    const file = path.join(dir, "cobro.db")
    const sim = await BindSimulator.start({ now: () => Date.now() })
    const env = { FAULT_DB: file, FAULT_BIND_URL: sim.url, FAULT_MERCHANTS: String(MERCHANTS) }
    try {
      const seeding = startEngine("seed", env)
      expect(await exitOf(seeding.child), seeding.output()).toBe(0)

      // The bank accepts every transfer as pending; the answers to the first 4 sends are lost.
      sim.faults.holdTransfers = true
      sim.faults.dropTransferAnswers = 4
      const first = startEngine("run", env)
      try {
        // Killed once the bank holds most transfers: some recorded as unknown, some maybe unsent.
        await until("transfers reach the bank", first, () => sim.transfers.size >= MERCHANTS - 2)
      } finally {
        await kill9(first)
      }
      const inFlight = rows<{ status: string }>(
        file,
        "SELECT status FROM cobro_outgoing_transfers WHERE status IN ('SENDING', 'PENDING')"
      )
      expect(inFlight.length).toBeGreaterThan(0)
      // Some sends' answers were lost (or cut by the kill): their outcome is unknown here.
      expect(inFlight.some((t) => t.status === "SENDING")).toBe(true)
      expect(
        rows<{ n: number }>(
          file,
          "SELECT COUNT(*) AS n FROM cobro_payouts WHERE payout_status <> 'PENDING'"
        )[0]!.n
      ).toBe(0)

      // While it is down, the bank completes most transfers and fails every third one; later
      // transfers (sent after the restart) are answered at once.
      const failing = new Set<string>()
      for (let i = 1; i <= MERCHANTS; i++) if (i % 3 === 0) failing.add(`m${i}`)
      const payoutOf = new Map(
        rows<{ payout_id: string; user_id: string }>(
          file,
          "SELECT payout_id, user_id FROM cobro_payouts"
        ).map((p) => [OriginId.forReference(p.payout_id), p.user_id])
      )
      for (const originId of sim.transfers.keys()) {
        sim.settle(originId, failing.has(payoutOf.get(originId) ?? "") ? "FAILED" : "COMPLETED")
      }
      sim.faults.holdTransfers = false
      // The first resend (if any) after the restart times out too.
      sim.faults.dropTransferAnswers = 1

      const second = startEngine("run", env)
      try {
        await until(
          "every payout settled",
          second,
          () =>
            rows<{ n: number }>(
              file,
              "SELECT COUNT(*) AS n FROM cobro_payouts WHERE payout_status = 'PENDING'"
            )[0]!.n === 0 &&
            rows<{ n: number }>(file, "SELECT COUNT(*) AS n FROM cobro_payouts")[0]!.n === MERCHANTS
        )
      } finally {
        await stop(second)
      }

      // Each payout's transfer is in the bank's books exactly once, under its reference.
      const payouts = rows<{ payout_id: string; user_id: string; payout_status: string; doc: string }>(
        file,
        "SELECT payout_id, user_id, payout_status, doc FROM cobro_payouts ORDER BY user_id"
      )
      expect(payouts).toHaveLength(MERCHANTS)
      expect(sim.transfers.size).toBe(MERCHANTS)
      for (const p of payouts) {
        const entry = sim.transfers.get(OriginId.forReference(p.payout_id))
        expect(entry, p.payout_id).toBeDefined()
        const bankStatus = entry!.status
        // Settled once, as the bank says: SUCCESS for COMPLETED, FAILED for FAILED.
        expect(p.payout_status).toBe(bankStatus === "COMPLETED" ? "SUCCESS" : "FAILED")
        expect(p.payout_status === "FAILED").toBe(failing.has(p.user_id) && bankStatus === "FAILED")
      }
      const transfers = rows<{ reference: string; status: string }>(
        file,
        "SELECT reference, status FROM cobro_outgoing_transfers ORDER BY reference"
      )
      expect(transfers).toHaveLength(MERCHANTS)
      expect(transfers.every((t) => t.status === "COMPLETED" || t.status === "FAILED")).toBe(true)

      // One ledger entry per settled payout; failed ones' money back in available, once.
      const settledEntries = rows<{ kind: string; n: number }>(
        file,
        "SELECT kind, COUNT(*) AS n FROM cobro_ledger_entries WHERE kind IN ('payout.sent', 'payout.failed') GROUP BY kind ORDER BY kind"
      )
      const failedCount = payouts.filter((p) => p.payout_status === "FAILED").length
      const expected = [
        ...(failedCount > 0 ? [{ kind: "payout.failed", n: failedCount }] : []),
        ...(MERCHANTS - failedCount > 0 ? [{ kind: "payout.sent", n: MERCHANTS - failedCount }] : [])
      ]
      expect(settledEntries).toEqual(expected)
      expect(failedCount).toBeGreaterThan(0)
      const events = rows<{ n: number }>(
        file,
        "SELECT COUNT(*) AS n FROM cobro_outbox WHERE type = 'payout.failed'"
      )[0]!.n
      expect(events).toBe(failedCount)

      const verify = await execCobro(["ledger", "verify", "--json"], { COBRO_DATABASE_URL: `file:${file}` })
      expect(verify.code, verify.stderr).toBe(0)
      expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, problems: [] })
    } finally {
      await sim.close()
    }
  }, 240_000)
})
