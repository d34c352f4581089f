/**
 * `cobro transfers list` on SQLite and Postgres: outgoing transfers recorded in the database
 * (in flight for a while, in flight a moment, settled), listed oldest first with their state,
 * age and what went wrong; stuck ones by `--stuck-after`; pages with `--after`; bad input named.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount, Ids, LedgerAccount, Money, OutgoingTransfer } from "@cobro/core"
import { OutgoingTransferRepository } from "@cobro/core/ports"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { DateTime, Duration, Effect, Exit } from "effect"
import { Services } from "../src/index.js"
import { cli, cliJson, configOf, failureOf, tempDb } from "./support.js"

const pg = await Effect.runPromise(pgAvailable)
if (!pg) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(`\n!!! Postgres at ${pgAdminUrl} is not reachable: the CLI's Postgres tests are SKIPPED !!!\n`)
}

const withEngine = <A, E>(env: Record<string, string>, effect: Effect.Effect<A, E, Services.Services>) =>
  Effect.flatMap(configOf(env), (config) => Effect.provide(effect, Services.layer(config)))

const sqlite = Effect.map(tempDb, (file) => ({ COBRO_DATABASE_URL: `file:${file}` }))
const postgres = Effect.map(freshPgUrl, (url) => ({ COBRO_DATABASE_URL: url }))

const destination = BankAccount.makeCbu("0170099", "0000000000901")

/** A transfer recorded `ageMinutes` ago (engine time), in `status`. */
const transfer = (
  reference: string,
  purpose: OutgoingTransfer.TransferPurpose,
  status: OutgoingTransfer.TransferState,
  ageMinutes: number,
  now: DateTime.Utc,
  extra: Partial<OutgoingTransfer.OutgoingTransfer> = {}
) => {
  const at = DateTime.subtractDuration(now, Duration.minutes(ageMinutes))
  return new OutgoingTransfer.OutgoingTransfer({
    reference,
    purpose,
    owner_id: purpose === "split_payout" ? "sp_1" : reference,
    destination,
    amount: Money.make(150_050n, "ARS"),
    in_transit: LedgerAccount.merchantInTransit(Ids.UserId.make("shop")),
    return_to: LedgerAccount.merchantAvailable(Ids.UserId.make("shop")),
    status,
    bank_transaction_id: null,
    failure_reason: null,
    last_error: null,
    sends: 1,
    checks: 0,
    next_check_at: DateTime.addDuration(now, Duration.minutes(1)),
    creation_timestamp: at,
    last_modified_timestamp: at,
    ...extra
  })
}

interface Listed {
  readonly transfers: ReadonlyArray<Record<string, unknown>>
  readonly next_after?: string
}

const scenario = (env: Record<string, string>) =>
  Effect.gen(function* () {
    yield* withEngine(
      env,
      Effect.gen(function* () {
        const repo = yield* OutgoingTransferRepository.OutgoingTransferRepository
        const now = yield* DateTime.now
        yield* repo.insert(
          transfer("po_old", "schedule_payout", "SENDING", 180, now, {
            last_error: "BIND did not answer within 10 seconds",
            sends: 2,
            checks: 3
          })
        )
        yield* repo.insert(
          transfer("spo_pending", "split_payout", "PENDING", 90, now, {
            bank_transaction_id: Ids.BankTransactionId.make("bind-77")
          })
        )
        yield* repo.insert(transfer("po_fresh", "schedule_payout", "PENDING", 5, now))
        yield* repo.insert(
          transfer("po_done", "schedule_payout", "COMPLETED", 240, now, {
            bank_transaction_id: Ids.BankTransactionId.make("bind-1")
          })
        )
        yield* repo.insert(
          transfer("po_failed", "schedule_payout", "FAILED", 200, now, { failure_reason: "cuenta cerrada" })
        )
      })
    )

    // By default: in flight (SENDING or PENDING), oldest first, absent values omitted.
    const inFlight = (yield* cliJson(["transfers", "list"], env)) as unknown as Listed
    expect(inFlight.transfers.map((t) => t["reference"])).toEqual(["po_old", "spo_pending", "po_fresh"])
    expect(inFlight).not.toHaveProperty("next_after")
    const [old, pending, fresh] = inFlight.transfers
    expect(old).toMatchObject({
      reference: "po_old",
      purpose: "schedule_payout",
      owner_id: "po_old",
      status: "SENDING",
      amount: "1500.50",
      currency: "ARS",
      destination,
      stuck: true,
      sends: 2,
      checks: 3,
      last_error: "BIND did not answer within 10 seconds"
    })
    expect(old!["age_seconds"]).toBeGreaterThanOrEqual(180 * 60)
    expect(old!["age_seconds"]).toBeLessThan(181 * 60)
    expect(typeof old!["next_check_at"]).toBe("string")
    expect(old).not.toHaveProperty("bank_transaction_id")
    expect(old).not.toHaveProperty("failure_reason")
    expect(pending).toMatchObject({ status: "PENDING", stuck: true, bank_transaction_id: "bind-77" })
    expect(pending).not.toHaveProperty("last_error")
    expect(fresh).toMatchObject({ status: "PENDING", stuck: false })

    // Stuck: in flight for more than an hour (default), or what --stuck-after says.
    const stuck = (yield* cliJson(["transfers", "list", "--status", "stuck"], env)) as unknown as Listed
    expect(stuck.transfers.map((t) => t["reference"])).toEqual(["po_old", "spo_pending"])
    const stuck2h = (yield* cliJson(
      ["transfers", "list", "--status", "stuck", "--stuck-after", "120"],
      env
    )) as unknown as Listed
    expect(stuck2h.transfers.map((t) => t["reference"])).toEqual(["po_old"])

    // Settled ones, by state; all of them; pages.
    const failed = (yield* cliJson(["transfers", "list", "--status", "failed"], env)) as unknown as Listed
    expect(failed.transfers).toEqual([
      expect.objectContaining({ reference: "po_failed", status: "FAILED", failure_reason: "cuenta cerrada" })
    ])
    expect(failed.transfers[0]).not.toHaveProperty("next_check_at")
    const all = (yield* cliJson(["transfers", "list", "--status", "all"], env)) as unknown as Listed
    expect(all.transfers.map((t) => t["reference"])).toEqual([
      "po_done",
      "po_failed",
      "po_old",
      "spo_pending",
      "po_fresh"
    ])
    const first = (yield* cliJson(
      ["transfers", "list", "--status", "all", "--limit", "2"],
      env
    )) as unknown as Listed
    expect(first.transfers.map((t) => t["reference"])).toEqual(["po_done", "po_failed"])
    expect(first.next_after).toBe("po_failed")
    const second = (yield* cliJson(
      ["transfers", "list", "--status", "all", "--limit", "2", "--after", "po_failed"],
      env
    )) as unknown as Listed
    expect(second.transfers.map((t) => t["reference"])).toEqual(["po_old", "spo_pending"])

    // As a table: the header, stuck ones marked, the detail.
    const human = (yield* cli(["transfers", "list"], env)).stdout.split("\n")
    expect(human[0]).toMatch(/^REFERENCE +PURPOSE +STATUS +AMOUNT +DESTINATION +AGE +SENDS +CHECKS +DETAIL$/)
    expect(human[1]).toMatch(
      /^po_old +schedule_payout +SENDING \(stuck\) +1500\.50 ARS +\d{22} +3h0m +2 +3 +last_error="BIND did not answer within 10 seconds" +next_check_at=/
    )
    expect(human[2]).toMatch(/^spo_pending +split_payout +PENDING \(stuck\) .* bank_id=bind-77 /)
    expect(human[3]).toMatch(/^po_fresh +schedule_payout +PENDING +1500\.50 ARS .* 5m\d+s /)
    expect(human).toHaveLength(4)
    expect((yield* cli(["transfers", "list", "--status", "stuck", "--stuck-after", "600"], env)).stdout).toBe(
      "no transfer stuck"
    )

    // Bad input is named.
    expect(failureOf(yield* cli(["transfers", "list", "--limit", "0"], env))).toBe(
      "request.invalid (limit): must be an integer from 1 to 500, got 0"
    )
    expect(failureOf(yield* cli(["transfers", "list", "--stuck-after", "-5"], env))).toBe(
      "request.invalid (stuck_after): must be a whole number of minutes, 0 or more, got -5"
    )
    // A state that does not exist: the CLI's own usage error, naming the choices.
    const unknown = yield* cli(["transfers", "list", "--status", "lost"], env)
    expect(Exit.isFailure(unknown.exit)).toBe(true)
    expect(`${unknown.stdout}\n${unknown.stderr}`).toContain("in-flight")
  })

describe("cobro transfers list", () => {
  it.scoped("SQLite: in flight, stuck, settled, pages", () => Effect.flatMap(sqlite, scenario), {
    timeout: 120_000
  })
  it.scoped.skipIf(!pg)(
    "Postgres: in flight, stuck, settled, pages",
    () => Effect.flatMap(postgres, scenario),
    {
      timeout: 120_000
    }
  )
})
