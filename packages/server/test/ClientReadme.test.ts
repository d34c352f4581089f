/**
 * `@cobro/client` against the real server (SQLite, on a random port): the README's JavaScript
 * walkthrough run as written, with user tokens that live one second so the client must replace
 * them on the way; a token the server stops accepting (revoked, or expired while the client's
 * clock says otherwise) answered 401, then fetched anew once and the request sent again; wrong
 * credentials, bad input and a reused Idempotency-Key as `CobroError`s with the envelope's key.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cobro, CobroError, type CobroOptions } from "@cobro/client"
import { Ids } from "@cobro/core"
import { CredentialRepository } from "@cobro/core/ports"
import * as esbuild from "esbuild"
import { DateTime, Effect } from "effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { configOf, demoServer, serverLayer, tempDb } from "./support.js"

const readme = fs.readFileSync(fileURLToPath(new URL("../../../README.md", import.meta.url)), "utf8")

/** The README's client walkthrough: the TypeScript block of its step 3. */
const walkthrough = (): string => {
  const step = readme.slice(readme.indexOf("### 3. The same from JavaScript"))
  const block = /```ts\n([\s\S]*?)```/.exec(step)?.[1]
  if (block === undefined) throw new Error("README: no ```ts block under step 3")
  return block
}

interface Sent {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly authorization: string | null
  readonly idempotencyKey: string | null
}

const isTokenRequest = (s: Sent) => s.method === "POST" && /^\/users\/[^/]+\/tokens$/.test(s.path)

/** A `fetch` that records what was sent and what came back; `after` runs before each answer is handed on. */
const recording = (after: (sent: Sent) => Promise<void> = async () => {}) => {
  const sent: Array<Sent> = []
  const fetch = async (request: Request) => {
    const response = await globalThis.fetch(request)
    const record: Sent = {
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      authorization: request.headers.get("authorization"),
      idempotencyKey: request.headers.get("idempotency-key")
    }
    sent.push(record)
    await after(record)
    return response
  }
  return { sent, fetch }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A sandbox server whose user tokens live one second, its base URL and the demo's credentials. */
const withServer = <A, E>(
  body: (
    base: string,
    credentials: NonNullable<CobroOptions["credentials"]>
  ) => Effect.Effect<A, E, CredentialRepository.CredentialRepository>
) =>
  Effect.gen(function* () {
    const config = yield* configOf({
      COBRO_DATABASE_URL: yield* tempDb,
      COBRO_JOB_INTERVAL: "1 hour",
      COBRO_TOKEN_LIFETIME: "1 second",
      COBRO_RATE_LIMITS: "false",
      COBRO_LOG_LEVEL: "warn"
    })
    return yield* Effect.gen(function* () {
      const { base, credentials } = yield* demoServer
      return yield* body(base, credentials)
    }).pipe(Effect.provide(serverLayer(config)))
  })

describe("the README's client walkthrough", () => {
  it.scopedLive("runs end to end, fetching new tokens as one-second tokens expire", () =>
    withServer((base, credentials) =>
      Effect.promise(async () => {
        // After each answer of the API the walk pauses past the token's lifetime, so every step
        // that needs a token finds the previous one expired.
        const { sent, fetch } = recording(async (s) => {
          if (!isTokenRequest(s)) await sleep(1_100)
        })
        class RecordedCobro extends Cobro {
          constructor(options: CobroOptions) {
            super({ ...options, fetch })
          }
        }
        const printed: Array<ReadonlyArray<unknown>> = []
        const console = { log: (...args: ReadonlyArray<unknown>) => void printed.push(args) }
        const source = walkthrough().replace(/^import .* from "@cobro\/client"\n/m, "")
        expect(source).not.toMatch(/^import /m)
        // The block reads the server's address and the credentials from the environment.
        const process = {
          env: {
            COBRO_URL: base,
            COBRO_CLIENT_ID: credentials.clientId,
            COBRO_CLIENT_SECRET: credentials.clientSecret
          }
        }
        const { code } = await esbuild.transform(source, { loader: "ts" })
        const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
          ...args: ReadonlyArray<string>
        ) => (...args: ReadonlyArray<unknown>) => Promise<void>
        await new AsyncFunction("Cobro", "CobroError", "console", "process", code)(
          RecordedCobro,
          CobroError,
          console,
          process
        )

        expect(printed).toEqual([["credited"], ["SUCCESS"], [404, "payment.not.found"]])
        const calls = sent.filter((s) => !isTokenRequest(s))
        expect(calls.map((s) => [s.method, s.status])).toEqual([
          ["POST", 200],
          ["POST", 200],
          ["GET", 200],
          ["GET", 404]
        ])
        // The public creation needs no token; each later step a new one, and none was refused.
        expect(calls[0]!.authorization).toBeNull()
        const bearers = calls.slice(1).map((s) => s.authorization)
        expect(new Set(bearers).size).toBe(3)
        expect(sent.filter(isTokenRequest).map((s) => s.status)).toEqual([200, 200, 200])
        expect(sent.some((s) => s.status === 401)).toBe(false)
        // Every POST carried an Idempotency-Key (UUIDs the client generated).
        for (const s of sent.filter((s) => s.method === "POST")) {
          expect(s.idempotencyKey).toMatch(
            /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
          )
        }
      })
    )
  )
})

describe("the client's tokens against the server", () => {
  it.scopedLive("a revoked token: 401, one new token, the request sent again", () =>
    withServer((base, credentials) =>
      Effect.gen(function* () {
        const { sent, fetch } = recording()
        const cobro = new Cobro({ baseUrl: base, credentials, fetch })
        const created = yield* Effect.promise(() =>
          cobro.createPayment({
            user_id: "demo",
            price: { amount: 700, currency: "ARS" },
            payment_options: ["transfer"],
            external_id: "revoked-1"
          })
        )
        const id = created.data.id
        expect((yield* Effect.promise(() => cobro.getPayment(id))).data.payment_status).toBe("PENDING")
        // The operator rotates the merchant's tokens out, server-side.
        const repository = yield* CredentialRepository.CredentialRepository
        expect(yield* repository.revokeUserTokens(Ids.UserId.make("demo"), yield* DateTime.now)).toBe(1)
        expect((yield* Effect.promise(() => cobro.getPayment(id))).data.id).toBe(id)
        expect(sent.map((s) => [s.method, s.path, s.status])).toEqual([
          ["POST", "/payments/", 200],
          ["POST", "/users/demo/tokens", 200],
          ["GET", `/payments/${id}`, 200],
          ["GET", `/payments/${id}`, 401],
          ["POST", "/users/demo/tokens", 200],
          ["GET", `/payments/${id}`, 200]
        ])
        expect(sent[3]!.authorization).toBe(sent[2]!.authorization)
        expect(sent[5]!.authorization).not.toBe(sent[3]!.authorization)
      })
    )
  )

  it.scopedLive(
    "a token expired on the server while the client's clock lags: one refetch, then success",
    () =>
      withServer((base, credentials) =>
        Effect.promise(async () => {
          const { sent, fetch } = recording()
          // A clock running at a tenth of the real speed: the client believes its token still fresh.
          const start = Date.now()
          const cobro = new Cobro({
            baseUrl: base,
            credentials,
            fetch,
            now: () => start + (Date.now() - start) / 10
          })
          const list = () => cobro.listPayments({ user_id: "demo" })
          expect((await list()).data.payments).toEqual([])
          await sleep(1_200)
          expect((await list()).data.payments).toEqual([])
          expect(sent.map((s) => [s.method, s.path, s.status])).toEqual([
            ["POST", "/users/demo/tokens", 200],
            ["GET", "/payments/", 200],
            ["GET", "/payments/", 401],
            ["POST", "/users/demo/tokens", 200],
            ["GET", "/payments/", 200]
          ])
        })
      )
  )

  it.scopedLive("wrong credentials: a CobroError 401 with the envelope's key, fetched once", () =>
    withServer((base, credentials) =>
      Effect.promise(async () => {
        const { sent, fetch } = recording()
        const cobro = new Cobro({
          baseUrl: base,
          credentials: { ...credentials, clientSecret: "cs_wrong" },
          fetch
        })
        const error = await cobro.getPayment("VAR-demo-x").catch((e: unknown) => e)
        expect(error).toBeInstanceOf(CobroError)
        expect(error).toMatchObject({ status: 401, message: "auth.credentials.invalid" })
        expect((error as CobroError).detail).toEqual(expect.any(String))
        expect(sent.map((s) => [s.method, s.path, s.status])).toEqual([["POST", "/users/demo/tokens", 401]])
      })
    )
  )
})

describe("the client's errors and keys against the server", () => {
  it.scopedLive("bad input: a CobroError 400 naming the field, not retried", () =>
    withServer((base, credentials) =>
      Effect.promise(async () => {
        const { sent, fetch } = recording()
        const cobro = new Cobro({ baseUrl: base, credentials, fetch })
        const error = await cobro
          .createPayment({
            user_id: "demo",
            price: { amount: -5, currency: "ARS" },
            payment_options: ["transfer"]
          })
          .catch((e: unknown) => e)
        expect(error).toBeInstanceOf(CobroError)
        expect(error).toMatchObject({ status: 400, message: "request.invalid", details: { field: "price" } })
        expect(sent).toHaveLength(1)
      })
    )
  )

  it.scopedLive(
    "an Idempotency-Key of the caller's is sent as given: its repeat answers the first creation",
    () =>
      withServer((base, credentials) =>
        Effect.promise(async () => {
          const { sent, fetch } = recording()
          const cobro = new Cobro({ baseUrl: base, credentials, fetch })
          const body = {
            user_id: "demo",
            price: { amount: 900, currency: "ARS" as const },
            payment_options: ["transfer" as const],
            external_id: "keyed-1"
          }
          const first = await cobro.createPayment(body, { idempotencyKey: "order-keyed-1" })
          const again = await cobro.createPayment(body, { idempotencyKey: "order-keyed-1" })
          expect(again.data).toEqual(first.data)
          expect(sent.map((s) => s.idempotencyKey)).toEqual(["order-keyed-1", "order-keyed-1"])
          const reused = await cobro
            .createPayment({ ...body, external_id: "keyed-2" }, { idempotencyKey: "order-keyed-1" })
            .catch((e: unknown) => e)
          expect(reused).toBeInstanceOf(CobroError)
          expect(reused).toMatchObject({ status: 422 })
        })
      )
  )
})
