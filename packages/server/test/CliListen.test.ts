/**
 * A bare `cobro listen` against a server started as `npm start` starts it (`cobro serve` in a
 * directory of its own, no settings): it finds the server's database in that directory, follows
 * the demo merchant, and forwards the events of a payment created without a `webhook_url`,
 * signed with the session's secret; without `--forward-to` it prints them. Real processes.
 */
import { Receiver } from "@cobro/webhooks"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { type CobroProcess, START_TIMEOUT, listeningPort, spawnCobro, stop } from "./support.js"

interface Received {
  readonly headers: Record<string, string>
  readonly body: string
}

/** A receiver on a random loopback port answering 204; what it received. */
const receiver = async () => {
  const received: Array<Received> = []
  const server = http.createServer((req, res) => {
    let body = ""
    req.on("data", (chunk: Buffer) => (body += chunk.toString()))
    req.on("end", () => {
      received.push({ headers: req.headers as Record<string, string>, body })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const until = async <A>(what: string, found: () => A | undefined, timeout: number): Promise<A> => {
  const deadline = Date.now() + timeout
  for (;;) {
    const value = found()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const outputOf = (running: CobroProcess, pattern: RegExp, timeout: number) =>
  until(
    `${String(pattern)} in:\n${running.output()}`,
    () => pattern.exec(running.output()) ?? undefined,
    timeout
  )

describe("a bare cobro listen", () => {
  it(
    "forwards the demo merchant's events from the database `npm start` uses, webhook_url or not",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-listen-"))
      const hook = await receiver()
      const running: Array<CobroProcess> = []
      try {
        // `npm start` is `cobro serve` with no settings; the port only is left to the system here.
        const server = spawnCobro(["serve"], { PORT: "0", COBRO_JOB_INTERVAL: "1 hour" }, dir)
        running.push(server)
        const port = await listeningPort(server, START_TIMEOUT, () => stop(server))
        const url = `http://127.0.0.1:${port}`
        const [, clientId] = await outputOf(server, /client_id: +(\S+)/, 10_000)
        const [, clientSecret] = await outputOf(server, /client_secret: +(cs_\S+)/, 10_000)

        const forwarding = spawnCobro(["listen", "--forward-to", hook.url], {}, dir)
        const printing = spawnCobro(["listen"], {}, dir)
        running.push(forwarding, printing)
        const [, secret] = await outputOf(
          forwarding,
          /signing secret for this session is (whsec_\S+)/,
          START_TIMEOUT
        )
        await outputOf(printing, /Ready!/, START_TIMEOUT)
        // It says where it reads, what it forwards and why an event would not arrive.
        expect(forwarding.output()).toContain(`merchant demo written to SQLite`)
        expect(forwarding.output()).toContain(path.join(fs.realpathSync(dir), ".cobro", "cobro.db"))
        expect(forwarding.output()).toContain("created without a webhook_url")
        expect(forwarding.output()).toContain("An event does not arrive when:")
        expect(printing.output()).toContain("this terminal")

        // A payment without a webhook_url, paid with the faucet: the server delivers it nowhere.
        const created = await fetch(`${url}/payments/`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            user_id: "demo",
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"],
            external_id: "listen-1"
          })
        })
        expect(created.status).toBe(200)
        const payment = ((await created.json()) as { data: { id: string; quotes: Array<{ cvu: string }> } })
          .data
        const issued = await fetch(`${url}/users/demo/tokens`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ client_id: clientId, client_secret: clientSecret })
        })
        const token = ((await issued.json()) as { data: { token: string } }).data.token
        const paid = await fetch(`${url}/cvu/${payment.quotes[0]!.cvu}/faucet`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ amount: 1500 })
        })
        expect(paid.status).toBe(200)

        const forwarded = await until(
          "the forwarded event",
          () => hook.received.find((r) => r.body.includes(payment.id)),
          30_000
        )
        expect(JSON.parse(forwarded.body)).toEqual({
          message: "Payment updated",
          paymentId: payment.id,
          externalId: "listen-1"
        })
        const verified = await Effect.runPromise(
          Effect.either(Receiver.verify({ secret, headers: forwarded.headers, body: forwarded.body }))
        )
        expect(verified._tag).toBe("Right")
        await outputOf(
          forwarding,
          /--> payment\.updated \[evt_\S+\] http:\/\/127\.0\.0\.1:\d+\/hook 204/,
          10_000
        )
        await outputOf(printing, new RegExp(`<-- payment\\.updated \\[evt_\\S+\\] .*"${payment.id}"`), 30_000)
      } finally {
        for (const process of running) await stop(process)
        await hook.close()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    4 * START_TIMEOUT
  )
})
