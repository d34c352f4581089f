/**
 * The reference server on BIND (`COBRO_BANK=bind`) against `BindSimulator`, all over real HTTP: a
 * payment's CVU comes from the simulator, the simulator posts "Aviso de transferencia entrante" to
 * the server's route, the payment turns SUCCESS and the merchant's webhook reaches a real receiver;
 * a payout schedule's sweep and a split payout land in the simulator's books. Then what goes
 * wrong: a notification that never comes (found by `cobro bank reconcile`), one sent twice,
 * malformed, unauthenticated or from an address not allowed; and production mode on the sandbox
 * bank, which does not start.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpClientRequest, HttpServer } from "@effect/platform"
import { BindSimulator } from "@cobro/bank-bind/testing"
import { Auth, BankAccount, SecondFactor } from "@cobro/core"
import { Effect, Schedule, Schema, Duration } from "effect"
import { readFileSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Admin } from "../src/index.js"
import {
  bindEnv,
  cli,
  configOf,
  failureOf,
  get,
  type Env,
  metricSeries,
  postJson,
  provider,
  request,
  serverLayer,
  tempDb
} from "./support.js"

const day = 86_400
const SECRET = "hook-secret-0123456789"
const cuit = "30712345671"
const payer = { cuit: "20123456786", name: "Ana Gómez", cbu: BankAccount.makeCbu("0170099", "2200000123456") }

const serverEnv = (sim: BindSimulator.Simulator, database: string, extra: Env = {}): Env => ({
  COBRO_DATABASE_URL: database,
  COBRO_JOB_INTERVAL: "1 hour",
  ...bindEnv(sim),
  COBRO_BIND_RETRY_BASE: "10 millis",
  COBRO_BIND_WEBHOOK_SECRET: SECRET,
  COBRO_RECONCILE_INTERVAL: "1 hour",
  ...extra
})

/** A merchant's webhook receiver on loopback; the bodies it received. */
const receiver = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ url: string; received: Array<string>; server: http.Server }>((resolve) => {
        const received: Array<string> = []
        const server = http.createServer((req, res) => {
          let body = ""
          req.on("data", (chunk: Buffer) => (body += chunk.toString()))
          req.on("end", () => {
            received.push(body)
            res.writeHead(200).end()
          })
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
            received,
            server
          })
        )
      })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((done) => server.close(() => done())))
)

/** The server's own base URL (the simulator posts to it). */
const baseUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address as HttpServer.TcpAddress
  return `http://127.0.0.1:${address.port}`
})

/** `read` again every 20 ms until `done` holds, for at most 10 seconds. */
const until = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean) =>
  read.pipe(
    Effect.filterOrFail(done, () => "not yet"),
    Effect.retry(Schedule.spaced(Duration.millis(20)).pipe(Schedule.upTo(Duration.seconds(10)))),
    Effect.orElse(() => read)
  )

const merchant = (user_id: string) =>
  Effect.gen(function* () {
    const user = yield* Admin.createUser({
      user_id,
      name: `Tienda ${user_id}`,
      email: `${user_id}@example.com`,
      cuit,
      status: "ACTIVE"
    })
    const token = (
      (yield* postJson(`/users/${user_id}/tokens`, {
        client_id: user.client_id,
        client_secret: user.client_secret
      })).body["data"] as { token: string }
    ).token
    return { user, token }
  })

const createPayment = (user_id: string, external_id: string, webhook_url?: string) =>
  Effect.map(
    postJson("/payments/", {
      user_id,
      external_id,
      price: { amount: 1500, currency: "ARS" },
      payment_options: ["transfer"],
      ...(webhook_url === undefined ? {} : { webhook_url })
    }),
    (r) => {
      expect(r.status).toBe(200)
      return r.body["data"] as { readonly id: string }
    }
  )

const cvuOf = (id: string) =>
  Effect.map(
    get(`/payments/${id}/public`),
    (r) => (r.body["data"] as { quotes: ReadonlyArray<{ address: string }> }).quotes[0]!.address
  )

const statusOf = (id: string) =>
  Effect.map(
    get(`/payments/${id}/public`),
    (r) => (r.body["data"] as { payment_status: string }).payment_status
  )

const notificationsPath = "/bank/bind/notifications"

describe("the server on BIND (COBRO_BANK=bind) against the simulator", () => {
  it.scopedLive(
    "payment → CVU from BIND → notification → SUCCESS → merchant webhook; sweep and split payout reach BIND",
    () =>
      Effect.gen(function* () {
        const sim = yield* BindSimulator.scoped()
        const hook = yield* receiver
        const env = serverEnv(sim, yield* tempDb)
        const config = yield* configOf(env)
        yield* Effect.gen(function* () {
          sim.setWebhook({
            url: `${yield* baseUrl}${notificationsPath}`,
            header: "x-bind-webhook-secret",
            secret: SECRET
          })
          const { user, token } = yield* merchant("bindshop")
          const payment = yield* createPayment(user.user_id, "order-1", hook.url)
          const cvu = yield* cvuOf(payment.id)
          expect(sim.cvus.get(cvu)?.open).toBe(true)
          // BIND's CVUs are the collecting entity's (its CUIT), opened with the merchant's name as
          // the holder name payers' banks show: the payer's page names what BIND reports.
          expect(sim.cvus.get(cvu)?.name).toBe("Tienda bindshop")
          const page = yield* get(`/pay/${payment.id}`)
          expect(page.status).toBe(200)
          expect(String(page.body)).toContain("Tienda bindshop")
          expect(String(page.body)).toContain("30-71659554-0")

          // BIND's outgoing events on: a payout settles as soon as BIND reports it.
          sim.faults.notifyOutgoing = true
          // Sent twice (BIND's retry): credited once.
          sim.faults.duplicateNotifications = 1
          const sent = yield* Effect.promise(() => sim.receive({ cvu, amount: 1500, sender: payer }))
          expect(sent.status).toBe(200)
          expect(yield* statusOf(payment.id)).toBe("SUCCESS")
          yield* until(
            Effect.sync(() => hook.received.length),
            (n) => n >= 1
          )
          expect(JSON.parse(hook.received[0]!)).toMatchObject({
            message: "Payment updated",
            paymentId: payment.id
          })

          // A payout schedule (partner token) and a split payout, made due by the sandbox clock.
          const own = BankAccount.makeCbu("0170099", "0000000000901")
          const other = BankAccount.makeCbu("0170099", "0000000000902")
          sim.addHolder({ cuit, name: "Tienda bindshop", cbu: own })
          sim.addHolder({ cuit: BankAccount.makeCuit("20", "40000902"), name: "Ana", cbu: other })
          const auth = yield* Auth.Auth
          const partner = yield* auth.registerPartner(
            Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
              name: "Bind Partner",
              redirect_url: "https://partner.example.com/cb"
            })
          )
          const { code } = yield* auth.issueCode(partner.partner.partner_id, user.user_id)
          const partnerToken = (yield* auth.exchangeCode(
            new Auth.CodeExchangeRequest({
              code,
              client_id: partner.client_id,
              client_secret: partner.client_secret
            })
          )).token
          const schedule = yield* postJson(
            "/transactions/schedules",
            { schedule_type: "payout", frequency: "daily", payload: { address: own } },
            partnerToken
          )
          expect(schedule.status).toBe(200)

          const split = (yield* postJson("/split/payments", { external_id: "s-1" }, token)).body["data"] as {
            split_payment_id: string
            cvu: string
          }
          expect(
            (yield* Effect.promise(() => sim.receive({ cvu: split.cvu, amount: 1000, sender: payer }))).status
          ).toBe(200)
          const created = (yield* postJson("/split/accounts", [{ address: other }], token)).body["data"] as {
            request_id: string
          }
          const verified = yield* postJson(
            "/split/accounts/verify",
            { request_id: created.request_id, code: SecondFactor.sandboxCode(created.request_id as never) },
            token
          )
          expect(verified.status).toBe(200)
          const account = (verified.body["data"] as { accounts: Array<{ account_id: string }> }).accounts[0]!
          const instruction = yield* postJson(
            `/split/payments/${split.split_payment_id}/payouts`,
            { payouts: [{ account_id: account.account_id, amount: 100 }] },
            token
          )
          expect(instruction.status).toBe(200)

          expect((yield* postJson("/sandbox/clock/advance", { seconds: 2 * day }, token)).status).toBe(200)
          const books = [...sim.transfers.values()].map((t) => ({
            to: t.to.cbu ?? t.to.alias,
            amount: t.amount
          }))
          expect(books).toContainEqual({ to: other, amount: 100 })
          // The sweep: the merchant's available balance (1500 less fees) to its own account.
          const sweep = books.find((t) => t.to === own)
          expect(sweep).toBeDefined()
          expect(sweep!.amount).toBeGreaterThan(0)
          expect(sweep!.amount).toBeLessThanOrEqual(1500)
          expect([...sim.transfers.values()].every((t) => t.status === "COMPLETED")).toBe(true)
        }).pipe(Effect.provide(serverLayer(config)), Effect.withConfigProvider(provider(env)))
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "a notification that never came is found by `cobro bank reconcile`; refused notifications are answered 400/401/403",
    () =>
      Effect.gen(function* () {
        const sim = yield* BindSimulator.scoped()
        const env = serverEnv(sim, yield* tempDb)
        const config = yield* configOf(env)
        yield* Effect.gen(function* () {
          const url = `${yield* baseUrl}${notificationsPath}`
          sim.setWebhook({ url, header: "x-bind-webhook-secret", secret: SECRET })
          const { user } = yield* merchant("lost")
          const payment = yield* createPayment(user.user_id, "order-lost")
          const cvu = yield* cvuOf(payment.id)

          sim.faults.dropNotifications = 1
          const lost = yield* Effect.promise(() => sim.receive({ cvu, amount: 1500, sender: payer }))
          const stranger0 = BankAccount.makeCvu("0000322", "9999999999998")
          expect(lost.status).toBe("dropped")
          expect(yield* statusOf(payment.id)).toBe("PENDING")

          const first = yield* cli(["bank", "reconcile", "--json"], env)
          expect(failureOf(first)).toBe("(succeeded)")
          const report = JSON.parse(first.stdout) as {
            listed: number
            known: number
            found: Array<{ bank_transaction_id: string; outcome: string; amount: string; target_id?: string }>
            advanced: boolean
          }
          expect(report).toMatchObject({ listed: 1, known: 0, advanced: true })
          expect(report.found).toEqual([
            expect.objectContaining({ bank_transaction_id: lost.id, outcome: "credited", amount: "1500.00" })
          ])
          expect(yield* statusOf(payment.id)).toBe("SUCCESS")

          // The late notification, then another run: credited once, nothing found again.
          expect(
            yield* Effect.promise(() =>
              sim.sendIncomingTransfer(
                url,
                { cvu, amount: 1500, sender: payer, id: lost.id },
                { header: "x-bind-webhook-secret", secret: SECRET }
              )
            )
          ).toBe(200)
          const again = yield* cli(["bank", "reconcile", "--json"], env)
          expect(JSON.parse(again.stdout)).toMatchObject({ listed: 1, known: 1, found: [], quarantined: [] })

          // One bad entry never blocks the rest: 1e17 ARS (over the maximum) is quarantined, a
          // sender CBU with a bad check digit does not stop the window, the next transfer is credited.
          const second = yield* createPayment(user.user_id, "order-after")
          const secondCvu = yield* cvuOf(second.id)
          const entry = (id: string, cvuIn: string, amount: number, senderCbu: string) => ({
            id,
            type: "TRANSFER",
            from: { bank_id: "322", account_id: "20-1-700001-10-5" },
            counterparty: {
              id: payer.cuit,
              name: payer.name,
              id_type: "CUIT_CUIL",
              bank_routing: { scheme: "UNAVAILABLE", address: "", code: "" },
              account_routing: { scheme: "CBU", address: senderCbu }
            },
            details: {
              type: "TRANSFERENCIAS_RECIBIDAS",
              origin_id: id,
              origin_debit: null,
              origin_credit: { cvu: cvuIn, cuit: sim.entity.cuit }
            },
            status: "TRANSFERENCIAS_RECIBIDAS",
            charge: { summary: "VAR", value: { currency: "ARS", amount } }
          })
          sim.bookRaw(entry("HUGE0000000000000000001", cvu, 1e17, payer.cbu))
          sim.bookRaw(entry("BADCBU00000000000000001", stranger0, 10, "0170099222000001234560"))
          sim.faults.dropNotifications = 1
          const after = yield* Effect.promise(() =>
            sim.receive({ cvu: secondCvu, amount: 1500, sender: payer })
          )
          const window = yield* cli(["bank", "reconcile", "--json"], env)
          expect(failureOf(window)).toBe("(succeeded)")
          const quarantine = JSON.parse(window.stdout) as {
            advanced: boolean
            found: Array<{ bank_transaction_id: string }>
            quarantined: Array<{ bank_transaction_id: string; reason: string; body: string }>
          }
          expect(quarantine.advanced).toBe(true)
          // Stored: every later report lists it too (`quarantine`).
          const stored = (yield* cli(["bank", "reconcile", "--json"], env)).stdout
          expect((JSON.parse(stored) as { quarantine: Array<unknown> }).quarantine).toContainEqual(
            expect.objectContaining({ bank_transaction_id: "HUGE0000000000000000001" })
          )
          expect(quarantine.quarantined).toContainEqual(
            expect.objectContaining({
              bank_transaction_id: "HUGE0000000000000000001",
              reason: expect.stringContaining("amount")
            })
          )
          expect(
            JSON.parse(quarantine.quarantined.find((q) => q.bank_transaction_id.startsWith("HUGE"))!.body)
          ).toMatchObject({ charge: { value: { amount: 1e17 } } })
          const ids = [...quarantine.found, ...quarantine.quarantined].map((f) => f.bank_transaction_id)
          expect(ids).toContain(after.id)
          expect(ids).toContain("BADCBU00000000000000001")
          expect(yield* statusOf(second.id)).toBe("SUCCESS")
          const text2 = yield* cli(
            ["bank", "reconcile", "--since", new Date(Date.now() - 60_000).toISOString()],
            env
          )
          expect(text2.stdout).toContain("quarantined: HUGE0000000000000000001")
          const text = yield* cli(["bank", "reconcile"], env)
          expect(text.stdout).toContain("no transfer was missing")
          const ledger = yield* cli(["ledger", "verify", "--json"], env)
          expect(JSON.parse(ledger.stdout)).toMatchObject({ ok: true })

          // Malformed: 400; no secret or a wrong one: 401. Nothing credited.
          const raw = (body: string, headers: Record<string, string>) =>
            request(
              HttpClientRequest.post(notificationsPath).pipe(
                HttpClientRequest.bodyText(body, "application/json"),
                HttpClientRequest.setHeaders(headers)
              )
            )
          const malformed = yield* raw('{"id":"x","data":{"id":"y"}}', { "x-bind-webhook-secret": SECRET })
          expect(malformed.status).toBe(400)
          expect(malformed.body).toMatchObject({ outcome: "malformed" })
          const unauthenticated = yield* raw("{}", {})
          expect(unauthenticated.status).toBe(401)
          const wrong = yield* raw("{}", { "x-bind-webhook-secret": "nope" })
          expect(wrong.status).toBe(401)
          // To a CVU that is not ours: recorded and returned to the sender at BIND, answered 200.
          const stranger = BankAccount.makeCvu("0000322", "9999999999999")
          const bounced = yield* Effect.promise(() =>
            sim.receive({ cvu: stranger, amount: 50, sender: payer })
          )
          expect(bounced.status).toBe(200)
          expect([...sim.transfers.values()].some((t) => t.to.cbu === payer.cbu && t.amount === 50)).toBe(
            true
          )
        }).pipe(Effect.provide(serverLayer(config)), Effect.withConfigProvider(provider(env)))
      }),
    { timeout: 60_000 }
  )

  it.scopedLive("notifications from an address outside COBRO_BIND_WEBHOOK_ALLOW are refused (403)", () =>
    Effect.gen(function* () {
      const sim = yield* BindSimulator.scoped()
      const env = serverEnv(sim, yield* tempDb, { COBRO_BIND_WEBHOOK_ALLOW: "203.0.113.0/24" })
      const config = yield* configOf(env)
      yield* Effect.gen(function* () {
        const { user } = yield* merchant("walled")
        const url = yield* baseUrl
        const payment = yield* createPayment(user.user_id, "o")
        const cvu = yield* cvuOf(payment.id)
        sim.setWebhook({
          url: `${url}${notificationsPath}`,
          header: "x-bind-webhook-secret",
          secret: SECRET
        })
        // Through the simulator's developer switch (what `cobro bank simulator` prints).
        const answer = yield* Effect.promise(() =>
          fetch(`${sim.url}${BindSimulator.controlPath}`, {
            method: "POST",
            body: JSON.stringify({ cvu, amount: 1500 })
          }).then((r) => r.json() as Promise<{ status: number }>)
        )
        expect(answer.status).toBe(403)
        expect(
          sim.incoming.map(
            (e) => (e.data as { details: { origin_credit: { cvu: string } } }).details.origin_credit.cvu
          )
        ).toEqual([cvu])
        expect(yield* statusOf(payment.id)).toBe("PENDING")
        // Each refused notification (the simulator retries) is counted by its outcome.
        const series = metricSeries(
          yield* Effect.promise(() => fetch(`${url}/metrics`).then((r) => r.text()))
        )
        const refused = series.get(
          'cobro_http_requests_total{route="/bank/bind/notifications",method="POST",status="403"}'
        )
        expect(refused).toBeGreaterThanOrEqual(1)
        expect(series.get('cobro_bank_notifications_total{outcome="forbidden"}')).toBe(refused)
      }).pipe(Effect.provide(serverLayer(config)), Effect.withConfigProvider(provider(env)))
    })
  )
})

describe("a notification is a claim, the bank the truth (production mode on BIND)", () => {
  it.scopedLive(
    "the documented notification credits after BIND confirms it; a redelivery credits once; an unknown transfer or another amount credits nothing; over the maximum is a 400",
    () =>
      Effect.gen(function* () {
        const sim = yield* BindSimulator.scoped()
        // BIND authenticates with mTLS (here: a verifying proxy's header); no shared secret.
        const env = serverEnv(sim, yield* tempDb, {
          COBRO_MODE: "production",
          COBRO_SECRET_KEY: "ab".repeat(32),
          COBRO_BIND_WEBHOOK_CLIENT_CERT: "header:x-ssl-client-verify=SUCCESS"
        })
        delete (env as Record<string, string>)["COBRO_BIND_WEBHOOK_SECRET"]
        const config = yield* configOf(env)
        yield* Effect.gen(function* () {
          const { user, token } = yield* merchant("claims")
          const payment = (external_id: string) =>
            Effect.map(
              postJson(
                "/payments/",
                {
                  user_id: user.user_id,
                  external_id,
                  price: { amount: 77070, currency: "ARS" },
                  payment_options: ["transfer"]
                },
                token
              ),
              (r) => r.body["data"] as { id: string }
            )
          const { id } = yield* payment("doc-1")
          const cvu = yield* cvuOf(id)
          // The page's real example, as BIND posts it; only the credited CVU is ours.
          const documented = JSON.parse(
            readFileSync(
              new URL("../../bank-bind/test/fixtures/transfer.cvu.received.json", import.meta.url),
              "utf8"
            )
          ) as {
            data: {
              id: string
              details: { origin_credit: { cvu: string } }
              charge: { value: { amount: number } }
            }
            redeliveries: number
          }
          documented.data.details.origin_credit.cvu = cvu
          const post = (
            body: unknown,
            headers: Record<string, string> = { "x-ssl-client-verify": "SUCCESS" }
          ) =>
            request(
              HttpClientRequest.post(notificationsPath).pipe(
                HttpClientRequest.bodyText(JSON.stringify(body), "application/json"),
                HttpClientRequest.setHeaders(headers)
              )
            )
          // Without the proxy's word that BIND's certificate was verified: 403.
          expect((yield* post(documented, {})).status).toBe(403)
          // A transfer BIND does not know: nothing credited, logged, 422 (BIND would retry).
          const madeUp = yield* post(documented)
          expect(madeUp.status).toBe(422)
          expect(madeUp.body).toMatchObject({ outcome: "unconfirmed" })
          expect(yield* statusOf(id)).toBe("PENDING")
          // The money reaches BIND (booked, not notified): now the same body is confirmed and credited.
          yield* Effect.promise(() =>
            sim.receive({
              cvu,
              amount: 77070,
              id: documented.data.id,
              sender: { cuit: "27265540703", name: "Maria Nicolasa Acuna", cbu: "0000003100069103363490" }
            })
          )
          const credited = yield* post(documented)
          expect([credited.status, credited.body["outcome"]]).toEqual([200, "credited"])
          expect(yield* statusOf(id)).toBe("SUCCESS")
          // BIND's redelivery of the same transfer: credited once.
          const redelivered = yield* post({ ...documented, redeliveries: 1 })
          expect([redelivered.status, redelivered.body["outcome"]]).toEqual([200, "duplicate"])
          // The same id with another amount or another CVU is not BIND's record: nothing credited.
          const second = yield* payment("doc-2").pipe(Effect.flatMap((p) => cvuOf(p.id)))
          const otherCvu = {
            ...documented,
            data: { ...documented.data, details: { origin_credit: { cvu: second } } }
          }
          expect((yield* post(otherCvu)).status).toBe(422)
          const more = {
            ...documented,
            data: {
              ...documented.data,
              id: "OTHERAMOUNT1",
              charge: { summary: "VAR", value: { currency: "ARS", amount: 50000 } }
            }
          }
          expect((yield* post(more)).status).toBe(422)
          // Over the API's maximum: a 400 naming the field, never a 500.
          const huge = {
            ...documented,
            data: { ...documented.data, charge: { summary: "VAR", value: { currency: "ARS", amount: 1e17 } } }
          }
          const refused = yield* post(huge)
          expect(refused.status).toBe(400)
          expect(refused.body).toMatchObject({ outcome: "malformed", field: "data.charge.value.amount" })
          const ledger = yield* cli(["ledger", "verify", "--json"], env)
          expect(JSON.parse(ledger.stdout)).toMatchObject({ ok: true })
          const balance = yield* get("/users/claims/balance", token)
          expect(balance.status).toBeLessThan(500)
        }).pipe(Effect.provide(serverLayer(config)), Effect.withConfigProvider(provider(env)))
      }),
    { timeout: 60_000 }
  )
})

describe("the outgoing-transfer event settles at once (production mode on BIND)", () => {
  it.scopedLive(
    "a refund settles SUCCESS when BIND's event comes (confirmed by the status query), a FAILED one returns the money; a duplicate changes nothing; an unknown transfer settles nothing",
    () =>
      Effect.gen(function* () {
        const sim = yield* BindSimulator.scoped()
        // The jobs (and the in-flight checks, every minute) never run within the test: only the
        // event can settle a refund here.
        const env = serverEnv(sim, yield* tempDb, {
          COBRO_MODE: "production",
          COBRO_SECRET_KEY: "ab".repeat(32),
          COBRO_JOB_INTERVAL: "1 hour",
          COBRO_BIND_WEBHOOK_CLIENT_CERT: "header:x-ssl-client-verify=SUCCESS"
        })
        delete (env as Record<string, string>)["COBRO_BIND_WEBHOOK_SECRET"]
        const config = yield* configOf(env)
        yield* Effect.gen(function* () {
          const verified = { "x-ssl-client-verify": "SUCCESS" }
          sim.setWebhook({
            url: `${yield* baseUrl}${notificationsPath}`,
            header: "x-ssl-client-verify",
            secret: "SUCCESS"
          })
          const { user, token } = yield* merchant("outgoing")
          const paid = (external_id: string) =>
            Effect.gen(function* () {
              const created = yield* postJson(
                "/payments/",
                {
                  user_id: user.user_id,
                  external_id,
                  price: { amount: 1500, currency: "ARS" },
                  payment_options: ["transfer"]
                },
                token
              )
              const { id } = created.body["data"] as { id: string }
              const cvu = yield* cvuOf(id)
              expect(
                (yield* Effect.promise(() => sim.receive({ cvu, amount: 1500, sender: payer }))).status
              ).toBe(200)
              expect(yield* statusOf(id)).toBe("SUCCESS")
              return id
            })
          const refund = (paymentId: string) =>
            Effect.map(postJson(`/payments/${paymentId}/refunds`, { refund_type: "FULL" }, token), (r) => {
              expect(r.status).toBe(200)
              return (r.body["data"] as { refund_id: string; status: string }).refund_id
            })
          const refundStatus = (paymentId: string, refundId: string) =>
            Effect.map(
              get(`/payments/${paymentId}/refunds/${refundId}`, token),
              (r) => (r.body["data"] as { status: string }).status
            )
          /** BIND's transfer of the refund, held IN_PROGRESS (the refund is PENDING meanwhile). */
          const inProgress = () => {
            const held = [...sim.transfers.values()].filter((t) => t.status === "IN_PROGRESS")
            expect(held).toHaveLength(1)
            return held[0]!
          }
          const outgoingEvent = (data: Record<string, unknown>) => {
            const documented = JSON.parse(
              readFileSync(
                new URL("../../bank-bind/test/fixtures/transfer.outgoing.json", import.meta.url),
                "utf8"
              )
            ) as { data: Record<string, unknown> }
            return { ...documented, data: { ...documented.data, ...data } }
          }
          const post = (body: unknown) =>
            request(
              HttpClientRequest.post(notificationsPath).pipe(
                HttpClientRequest.bodyText(JSON.stringify(body), "application/json"),
                HttpClientRequest.setHeaders(verified)
              )
            )

          sim.faults.holdTransfers = true
          sim.faults.notifyOutgoing = true
          // A refund is paid from the available balance and the commission stays earned: a third
          // paid payment gives the merchant the room to return all of each refunded one.
          yield* paid("float")
          const first = yield* paid("refund-ok")
          const ok = yield* refund(first)
          const transfer = inProgress()
          expect(yield* refundStatus(first, ok)).toBe("PENDING")
          // BIND completes it and posts its event: the refund settles without waiting for a check.
          sim.settle(transfer.origin_id, "COMPLETED")
          expect(yield* until(refundStatus(first, ok), (s) => s === "SUCCESS")).toBe("SUCCESS")
          // The same event again (BIND's redelivery, or a late one): nothing changes.
          const again = yield* post(outgoingEvent({ id: transfer.id, status: "COMPLETED" }))
          expect([again.status, again.body["outcome"]]).toEqual([200, "duplicate"])
          expect(yield* refundStatus(first, ok)).toBe("SUCCESS")

          // A FAILED event: BIND gave the money back, the refund fails and the payment keeps it.
          const second = yield* paid("refund-failed")
          const failing = yield* refund(second)
          const failed = inProgress()
          // The event claims COMPLETED before BIND's status query says so: nothing settles yet.
          const early = yield* post(outgoingEvent({ id: failed.id, status: "COMPLETED" }))
          expect([early.status, early.body["outcome"]]).toEqual([200, "pending"])
          expect(yield* refundStatus(second, failing)).toBe("PENDING")
          sim.settle(failed.origin_id, "FAILED")
          expect(yield* until(refundStatus(second, failing), (s) => s !== "PENDING")).toBe("FAILED")
          // The money is back: the payment can be refunded again.
          sim.faults.holdTransfers = false
          sim.faults.notifyOutgoing = false
          const retried = yield* refund(second)
          expect(retried).not.toBe(failing)

          // An event for a transfer BIND does not know (the page's own example): nothing settles.
          const unknown = yield* post(outgoingEvent({}))
          expect([unknown.status, unknown.body["outcome"]]).toEqual([422, "unconfirmed"])
          const ledger = yield* cli(["ledger", "verify", "--json"], env)
          expect(JSON.parse(ledger.stdout)).toMatchObject({ ok: true })
        }).pipe(Effect.provide(serverLayer(config)), Effect.withConfigProvider(provider(env)))
      }),
    { timeout: 60_000 }
  )
})

describe("each documented alias refusal reaches the API as its own error key", () => {
  it.scopedLive(
    "in use at BIND → customer.alias.taken (409); a format BIND refuses → customer.alias.invalid (400); changed within 24 hours → a new CVU",
    () =>
      Effect.gen(function* () {
        const sim = yield* BindSimulator.scoped()
        const env = serverEnv(sim, yield* tempDb)
        const config = yield* configOf(env)
        yield* Effect.gen(function* () {
          const user = yield* Admin.createUser({
            user_id: "aliases",
            name: "Tienda aliases",
            email: "aliases@example.com",
            cuit,
            alias_prefix: "tda",
            status: "ACTIVE"
          })
          const token = (
            (yield* postJson("/users/aliases/tokens", {
              client_id: user.client_id,
              client_secret: user.client_secret
            })).body["data"] as { token: string }
          ).token
          const create = (customer_id: string, alias: string) =>
            postJson("/customers/", { user_id: "aliases", alias, customer_id, name: "Cliente" }, token)
          const open = () => [...sim.cvus.values()].filter((c) => c.open)
          // Another holder's alias at BIND ("El alias ya se encuentra en uso").
          sim.addHolder({ ...payer, alias: "tdaocupado" })
          const taken = yield* create("c1", "ocupado")
          expect([taken.status, taken.body["message"]]).toEqual([409, "customer.alias.taken"])
          // A format BIND refuses ("El formato del alias es incorrecto").
          sim.faults.refuseAliasFormat.add("tdararo")
          const invalid = yield* create("c2", "raro")
          expect([invalid.status, invalid.body["message"]]).toEqual([400, "customer.alias.invalid"])
          expect(open()).toHaveLength(0)
          const made = yield* create("c3", "bueno")
          expect(made.status).toBe(200)
          const first = (made.body["data"] as { bank_info: { cvu: string; alias: string } }).bank_info
          expect(first.alias).toBe("tdabueno")
          // A second alias within 24 hours ("…más de una vez en 24 horas"): a new CVU with it.
          const changed = yield* request(
            HttpClientRequest.patch("/customers/c3/alias").pipe(
              HttpClientRequest.bodyUnsafeJson({ alias: "nuevo", create_new_cvu: false }),
              HttpClientRequest.bearerToken(token)
            )
          )
          expect(changed.status).toBe(200)
          const now = (changed.body["data"] as { bank_info: { cvu: string; alias: string } }).bank_info
          expect(now.alias).toBe("tdanuevo")
          expect(now.cvu).not.toBe(first.cvu)
          expect(sim.cvus.get(first.cvu)?.open).toBe(false)
          expect(sim.cvus.get(now.cvu)?.alias).toBe("tdanuevo")
        }).pipe(Effect.provide(serverLayer(config)), Effect.withConfigProvider(provider(env)))
      }),
    { timeout: 60_000 }
  )
})

describe("production mode and the bank", () => {
  it.scopedLive("production on the sandbox bank does not start, naming COBRO_BANK", () =>
    Effect.gen(function* () {
      const env = {
        COBRO_DATABASE_URL: yield* tempDb,
        COBRO_MODE: "production",
        COBRO_SECRET_KEY: "ab".repeat(32),
        PORT: "0"
      }
      const result = yield* cli(["serve"], env)
      expect(failureOf(result)).toMatch(
        /COBRO_BANK must name a real bank in production mode.*COBRO_BANK=bind/s
      )
      const explicit = yield* cli(["serve"], { ...env, COBRO_BANK: "sandbox" })
      expect(failureOf(explicit)).toContain("COBRO_BANK must name a real bank")
      const unknown = yield* cli(["serve"], { ...env, COBRO_BANK: "bank-of-nowhere" })
      expect(failureOf(unknown)).toContain('COBRO_BANK must be "sandbox" or "bind", got "bank-of-nowhere"')
    })
  )

  it.scopedLive("production on BIND without its settings does not start, naming them", () =>
    Effect.gen(function* () {
      const env = {
        COBRO_DATABASE_URL: yield* tempDb,
        COBRO_MODE: "production",
        COBRO_SECRET_KEY: "ab".repeat(32),
        COBRO_BANK: "bind",
        PORT: "0"
      }
      const result = yield* cli(["serve"], env)
      expect(failureOf(result)).toContain("COBRO_BIND_CLIENT_ID is required")
      expect(failureOf(result)).toContain("COBRO_BIND_CUIT is required")
    })
  )
})
