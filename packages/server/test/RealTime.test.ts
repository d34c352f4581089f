/**
 * A merchant's sandbox test clock moves the payment domain only: tokens, authorization and 2FA codes,
 * `Idempotency-Key` retention and rate limits stay on real time (issue 21, item 3). Each test
 * runs the whole server over real HTTP on a real time the test moves itself (`real`: the system's
 * clock plus a shift), so a lifetime can be shown to pass on real time without waiting for it.
 * The rate limits count on their store's clock (the system's): their test waits out a short window.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpClientRequest } from "@effect/platform"
import { Auth, BankAccount, Ids, SecondFactor } from "@cobro/core"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { Clock, DateTime, Duration, Effect, type Scope } from "effect"
import { Admin } from "../src/index.js"
import { SandboxBank, SandboxClocks } from "@cobro/bank-sandbox"
import { configOf, get, postJson, request, serverLayer, tempDb } from "./support.js"

const day = 86_400
const pg = await Effect.runPromise(pgAvailable)

const stores: ReadonlyArray<readonly [string, Effect.Effect<string, never, Scope.Scope>, boolean]> = [
  ["SQLite", tempDb, false],
  ["Postgres", freshPgUrl, !pg]
]

/** The system's clock shifted by an amount the test moves forward: real time for the server. */
interface ShiftedClock {
  readonly clock: Clock.Clock
  readonly shift: { millis: number }
  readonly unsafeCurrentTimeMillis: () => number
}

const shiftedClock = (): ShiftedClock => {
  const shift = { millis: 0 }
  const clock = SandboxClocks.offsetClock(Clock.make(), () => shift.millis)
  return { clock, shift, unsafeCurrentTimeMillis: () => clock.unsafeCurrentTimeMillis() }
}

/**
 * `body` against a sandbox server on `databaseUrl`, built on `real` as real time (background
 * jobs hourly: only the advances run due work).
 */
const inServer = <A, E, R>(
  databaseUrl: Effect.Effect<string, never, Scope.Scope>,
  body: (real: ShiftedClock) => Effect.Effect<A, E, R>,
  env: Record<string, string> = {}
) =>
  Effect.gen(function* () {
    const real = shiftedClock()
    const config = yield* configOf({
      COBRO_DATABASE_URL: yield* databaseUrl,
      COBRO_JOB_INTERVAL: "1 hour",
      ...env
    })
    return yield* body(real).pipe(Effect.provide(serverLayer(config)), Effect.withClock(real.clock))
  })

/** Moves real time forward by `by` (and every merchant's test clock with it: real time plus its offset). */
const pass = (real: ShiftedClock, by: Duration.DurationInput) =>
  Effect.sync(() => {
    real.shift.millis += Duration.toMillis(by)
  })

/** Advances the test clock of the merchant `token` is for. */
const advance = (seconds: number, token: string) =>
  Effect.map(postJson("/sandbox/clock/advance", { seconds }, token), (r) => {
    expect(r.status).toBe(200)
    return r.body["data"] as { readonly now: string; readonly offset_seconds: number }
  })

/** An ACTIVE merchant and a fresh user token of it. */
const merchantWithToken = (user_id: string) =>
  Effect.gen(function* () {
    const { client_id, client_secret } = yield* Admin.createUser({
      user_id,
      name: `Tienda ${user_id}`,
      email: `${user_id}@example.com`,
      cuit: "30712345671",
      status: "ACTIVE"
    })
    const fresh = Effect.map(postJson(`/users/${user_id}/tokens`, { client_id, client_secret }), (issued) => {
      expect(issued.status).toBe(200)
      return issued.body["data"] as { token: string; expires_in: number; expiration_timestamp: string }
    })
    return { client_id, client_secret, fresh, ...(yield* fresh) }
  })

const millisOf = (iso: string) => DateTime.toEpochMillis(DateTime.unsafeMake(iso))

describe.each(stores)("on %s, the sandbox clock leaves real time alone", (_, databaseUrl, skip) => {
  it.scopedLive.skipIf(skip)(
    "a token outlives a 5-day advance that expires the payment, then expires after its real hour",
    () =>
      inServer(databaseUrl, (real) =>
        Effect.gen(function* () {
          const merchant = yield* merchantWithToken("tienda")
          const created = yield* postJson(
            "/payments/",
            {
              user_id: "tienda",
              external_id: "o-1",
              price: { amount: 1500, currency: "ARS" },
              payment_options: ["transfer"]
            },
            merchant.token
          )
          expect(created.status).toBe(200)
          const id = (created.body["data"] as { id: string }).id

          yield* advance(5 * day + 60, merchant.token)
          const read = yield* get(`/payments/${id}`, merchant.token)
          expect(read.status).toBe(200)
          expect(read.body["data"]).toMatchObject({ id, payment_status: "EXPIRED" })

          // A token issued after the advance expires an hour of real time from now, not of the
          // sandbox's five days ahead.
          const later = yield* postJson("/users/tienda/tokens", {
            client_id: merchant.client_id,
            client_secret: merchant.client_secret
          })
          const laterToken = later.body["data"] as { token: string; expiration_timestamp: string }
          const realNow = real.unsafeCurrentTimeMillis()
          expect(millisOf(laterToken.expiration_timestamp) - realNow).toBeGreaterThan(3_540_000)
          expect(millisOf(laterToken.expiration_timestamp) - realNow).toBeLessThanOrEqual(3_600_000)

          // The first token's hour passes on real time.
          yield* pass(real, Duration.millis(millisOf(merchant.expiration_timestamp) - realNow + 1))
          const expired = yield* get(`/payments/${id}`, merchant.token)
          expect(expired.status).toBe(401)
          expect(expired.body).toMatchObject({ message: "auth.token.expired", error: true, code: 401 })
          expect((yield* get(`/payments/${id}`, laterToken.token)).status).toBe(200)
        })
      )
  )

  it.scopedLive.skipIf(skip)(
    "an authorization code outlives an advance, then expires after its 5 real minutes",
    () =>
      inServer(databaseUrl, (real) =>
        Effect.gen(function* () {
          const partner = yield* Admin.createPartner({
            name: "Socio",
            redirect_url: "https://socio.example.com/back"
          })
          const cliente = yield* merchantWithToken("cliente")
          const auth = yield* Auth.Auth
          const exchange = (code: string) =>
            postJson("/auth/tokens", {
              code,
              client_id: partner.client_id,
              client_secret: partner.client_secret
            })

          const first = yield* auth.issueCode(partner.partner_id, Ids.UserId.make("cliente"))
          yield* advance(day, cliente.token)
          const granted = yield* exchange(first.code)
          expect(granted.status).toBe(200)
          const partnerToken = (granted.body["data"] as { access_token: string }).access_token
          const created = yield* postJson(
            "/payments/",
            {
              user_id: "cliente",
              external_id: "p-1",
              price: { amount: 100, currency: "ARS" },
              payment_options: ["transfer"]
            },
            partnerToken
          )
          expect(created.status).toBe(200)

          const second = yield* auth.issueCode(partner.partner_id, Ids.UserId.make("cliente"))
          yield* pass(real, "5 minutes")
          const late = yield* exchange(second.code)
          expect(late.status).toBe(401)
          expect(late.body).toMatchObject({ message: "auth.code.expired" })
        })
      )
  )

  it.scopedLive.skipIf(skip)("an Idempotency-Key is still replayed after an advance, not run again", () =>
    inServer(databaseUrl, () =>
      Effect.gen(function* () {
        const merchant = yield* merchantWithToken("tienda")
        const created = yield* postJson(
          "/payments/",
          {
            user_id: "tienda",
            external_id: "o-1",
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"]
          },
          merchant.token
        )
        const payment = created.body["data"] as { id: string; quotes: ReadonlyArray<{ cvu: string }> }
        const faucet = (token: string) =>
          request(
            HttpClientRequest.post(`/cvu/${payment.quotes[0]!.cvu}/faucet`).pipe(
              HttpClientRequest.bodyUnsafeJson({ amount: 500 }),
              HttpClientRequest.bearerToken(token),
              HttpClientRequest.setHeader("Idempotency-Key", "pay-500")
            )
          )
        const sent = yield* faucet(merchant.token)
        expect(sent.status).toBe(200)
        // Two days on, still before the payment's expiry; the client retries its request.
        // (A token of its own: this test is about the key, not about tokens.)
        yield* advance(2 * day, merchant.token)
        const token = (yield* merchant.fresh).token
        const retried = yield* faucet(token)
        expect(retried.status).toBe(200)
        expect(retried.headers["idempotent-replayed"]).toBe("true")
        expect(retried.body).toEqual(sent.body)
        const read = yield* get(`/payments/${payment.id}`, token)
        expect(read.body["data"]).toMatchObject({ payment_status: "UNDERPAID" })
        expect((read.body["data"] as { transactions: ReadonlyArray<unknown> }).transactions).toHaveLength(1)
      })
    )
  )
})

describe("on real time in the sandbox", () => {
  it.scopedLive("rate limits: an advance does not open a new window; the window's real seconds do", () =>
    inServer(
      tempDb,
      () =>
        Effect.gen(function* () {
          // A merchant whose token comes from the engine, not the rate-limited route.
          const { client_id, client_secret } = yield* Admin.createUser({
            user_id: "reloj",
            name: "Tienda reloj",
            email: "reloj@example.com",
            cuit: "30712345671",
            status: "ACTIVE"
          })
          const { token } = yield* (yield* Auth.Auth).issueUserToken(
            Ids.UserId.make("reloj"),
            new Auth.TokenRequest({ client_id, client_secret })
          )
          const wrong = () =>
            postJson("/users/tienda/tokens", { client_id: "nobody", client_secret: "wrong" })
          for (let i = 0; i < 10; i++) expect((yield* wrong()).status).toBe(401)
          expect((yield* wrong()).status).toBe(429)
          yield* advance(day, token)
          const after = yield* wrong()
          expect(after.status).toBe(429)
          expect(after.body).toMatchObject({ message: "rate.limit.exceeded" })
          // The limits count on the system's clock itself (their store's), not on the server's
          // real time: the test waits out their short window.
          yield* Effect.sleep("5300 millis")
          expect((yield* wrong()).status).toBe(401)
        }),
      { COBRO_RATE_LIMIT_FAILURES_PER_CLIENT: "10 per 5 seconds" }
    )
  )

  it.scopedLive("a 2FA code outlives an advance, then expires after its 10 real minutes", () =>
    inServer(tempDb, (real) =>
      Effect.gen(function* () {
        const merchant = yield* merchantWithToken("tienda")
        const bank = yield* SandboxBank.SandboxBank
        const addresses = [1, 2].map((n) => BankAccount.makeCbu("2850590", String(n).padStart(13, "0")))
        for (const account of addresses) {
          yield* bank.registerHolder({
            account,
            cuit: BankAccount.Cuit.make("30712345671"),
            name: "Tienda tienda"
          })
        }
        const createFor = (address: string) =>
          Effect.map(postJson("/split/accounts", [{ address }], merchant.token), (r) => {
            expect(r.status).toBe(200)
            return (r.body["data"] as { request_id: string }).request_id
          })
        const verify = (request_id: string, token: string) =>
          postJson(
            "/split/accounts/verify",
            { request_id, code: SecondFactor.sandboxCode(request_id) },
            token
          )

        const first = yield* createFor(addresses[0]!)
        const second = yield* createFor(addresses[1]!)
        yield* advance(day, merchant.token)
        // (A token of its own: this test is about the code, not about tokens.)
        const token = (yield* merchant.fresh).token
        const verified = yield* verify(first, token)
        expect(verified.status).toBe(200)
        expect(verified.body["data"]).toMatchObject({ status: "VERIFIED" })
        // The code shows in `cobro sandbox codes` until it expires on real time.
        expect((yield* Admin.sandboxCodes("tienda")).map((c) => c.request_id)).toEqual([second])

        yield* pass(real, "10 minutes")
        expect(yield* Admin.sandboxCodes("tienda")).toEqual([])
        const late = yield* verify(second, token)
        expect(late.status).toBe(400)
        expect(late.body).toMatchObject({ message: "verification.expired" })
      })
    )
  )
})
