/**
 * The fuzz of `@cobro/http` runs in process over the memory store, which keeps any string. Here
 * the whole server runs over Postgres and over SQLite, and every path parameter, query
 * parameter and body field of every route (and the hosted pages) gets a NUL, a lone surrogate,
 * a control character and a 10 kB string. The store never sees what it cannot keep: no answer
 * is a 5xx, every error is the documented envelope (the pages answer HTML).
 *
 * In CI (`CI=true`) a missing Postgres fails the run instead of skipping it.
 */
import { HttpApi, HttpClient, HttpClientRequest, type HttpMethod } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Auth } from "@cobro/core"
import { Api } from "@cobro/http"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { Arbitrary, Effect, FastCheck, Option, Schema, type Scope } from "effect"
import { Admin } from "../src/index.js"
import { configOf, serverLayer, tempDb } from "./support.js"

const pg = await Effect.runPromise(pgAvailable)
if (!pg) {
  if (process.env["CI"] === "true") {
    throw new Error(
      `CI: Postgres at ${pgAdminUrl} is not reachable; the storage fuzz must run on Postgres in CI`
    )
  }
  console.warn(`\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres storage fuzz is SKIPPED !!!\n`)
}

const SEED = 20_261_124

/** A 10 kB string that does not compress (random letters), the way an index row would hold it. */
const noise = (length: number) => {
  const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
  let state = 12_345
  let out = ""
  for (let i = 0; i < length; i++) {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    out += letters[state % letters.length]
  }
  return out
}

/** String values a field gets in place of its own. */
const junkStrings: ReadonlyArray<string> = [
  "\u0000",
  "demo\u0000",
  "\ud800",
  "a\udfffb",
  "a\u0001b",
  noise(10_000),
  "ñ".repeat(10_000)
]

/** Path parameter values, percent-encoded as they go on the wire. */
const junkSegments: ReadonlyArray<string> = [
  "%00",
  "demo%00",
  "%ED%A0%80",
  "%01",
  "%ZZ",
  "%E0%A4%A",
  noise(10_000),
  "%C3%B1".repeat(5_000)
]

interface Route {
  readonly method: string
  readonly path: string
  readonly payload: Option.Option<Schema.Schema.Any>
  readonly query: boolean
}

const routes: ReadonlyArray<Route> = (() => {
  const all: Array<Route> = []
  HttpApi.reflect(Api.CobroApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) =>
      all.push({
        method: endpoint.method,
        path: endpoint.path,
        payload: endpoint.payloadSchema as unknown as Option.Option<Schema.Schema.Any>,
        query: Option.isSome(endpoint.urlParamsSchema)
      })
  })
  return all
})()

/** Values of the wire shape of `schema` (its encoded side, without its refinements). */
const shapedBodies = (schema: Schema.Schema.Any, n: number): ReadonlyArray<unknown> =>
  FastCheck.sample(Arbitrary.make(Schema.encodedSchema(schema as Schema.Schema<unknown, unknown, never>)), {
    seed: SEED,
    numRuns: n
  })

/** Every path to a string (a key's value or an array element) in `value`. */
const stringPaths = (
  value: unknown,
  prefix: ReadonlyArray<string | number> = []
): Array<Array<string | number>> => {
  if (typeof value === "string") return [[...prefix]]
  if (Array.isArray(value)) return value.flatMap((v, i) => stringPaths(v, [...prefix, i]))
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => stringPaths(v, [...prefix, k]))
  }
  return []
}

const replaceAt = (value: unknown, path: ReadonlyArray<string | number>, junk: unknown): unknown => {
  if (path.length === 0) return junk
  const [head, ...rest] = path
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? replaceAt(v, rest, junk) : v))
  const record = value as Record<string, unknown>
  return { ...record, [head!]: replaceAt(record[head!], rest, junk) }
}

interface Answer {
  readonly status: number
  readonly text: string
  readonly contentType: string
}

const send = (
  method: string,
  url: string,
  options: { readonly token?: string; readonly body?: unknown; readonly form?: string } = {}
) =>
  Effect.gen(function* () {
    let request = HttpClientRequest.make(method as HttpMethod.HttpMethod)(url)
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.body !== undefined) {
      request = HttpClientRequest.bodyText(request, JSON.stringify(options.body), "application/json")
    }
    if (options.form !== undefined) {
      request = HttpClientRequest.bodyText(request, options.form, "application/x-www-form-urlencoded")
    }
    const response = yield* (yield* HttpClient.HttpClient).execute(request)
    const text = yield* response.text
    return {
      status: response.status,
      text,
      contentType: response.headers["content-type"] ?? ""
    } satisfies Answer
  }).pipe(Effect.orDie)

const DOTTED = /^[a-z0-9_]+(?:\.[a-z0-9_]+)+$/

/** Not a 5xx; an error is an envelope with a dotted key and a detail, or an HTML page. */
const check = (where: string, answer: Answer) => {
  expect(answer.status, `${where} → ${answer.status} ${answer.text.slice(0, 300)}`).toBeLessThan(500)
  if (answer.status < 400) return
  if (answer.contentType.startsWith("text/html")) return
  let body: { message?: unknown; error?: unknown; data?: { detail?: unknown } } = {}
  try {
    body = JSON.parse(answer.text) as typeof body
  } catch {
    expect.fail(`${where} → ${answer.status} is not JSON: ${JSON.stringify(answer.text.slice(0, 200))}`)
  }
  expect(body.error, where).toBe(true)
  expect(String(body.message), where).toMatch(DOTTED)
  expect(typeof body.data?.detail, where).toBe("string")
}

/** `:param` of `path` filled from `params`, `x` for a parameter it does not name. */
const fill = (path: string, params: Readonly<Record<string, string>>) =>
  path.replace(/:(\w+)/g, (_, name: string) => params[name] ?? "x")

const CBU = "2850590900000000000178"

/** Bodies that decode, so a field's junk reaches the service and the store. */
const decodable = (user_id: string, cvu: string): Readonly<Record<string, unknown>> => ({
  "POST /payments/": {
    user_id,
    external_id: "order-1",
    price: { amount: 100, currency: "ARS" },
    payment_options: ["transfer"],
    motive: "pago",
    metadata: { order: "1", tags: ["a"] }
  },
  "PUT /payments/:paymentId/metadata": { motive: "pago", metadata: { order: "2" } },
  "POST /customers/": {
    user_id,
    alias: "cli",
    customer_id: "c1",
    name: "Ana",
    contact: { email: "ana@example.com" }
  },
  "PATCH /customers/:customer_id/alias": { alias: "otro" },
  "PATCH /users/:user_id": { alias_prefix: "ab" },
  "POST /transactions/schedules": {
    schedule_type: "payout",
    frequency: "daily",
    payload: { address: CBU }
  },
  "POST /split/payments": { external_id: "s1" },
  "POST /split/payments/:split_payment_id/payouts": { payouts: [{ account_id: "pa_x", amount: 1 }] },
  "POST /split/accounts": [{ address: CBU, label: "cuenta" }],
  "POST /split/accounts/verify": { request_id: "vr_x", code: "123456" },
  "POST /cvu/:cvu/faucet": { amount: 10, sender_cuit: "20123456786", reference: "r" },
  _cvu: cvu
})

/** A merchant with a payment, a customer, a user token and a partner token. */
const fixture = Effect.gen(function* () {
  const created = yield* Admin.createUser({
    user_id: "fuzz",
    name: "Tienda Fuzz",
    email: "fuzz@example.com",
    cuit: "30712345671",
    status: "ACTIVE",
    alias_prefix: "fz"
  })
  const user_id = created.user_id
  const login = yield* send("POST", `/users/${user_id}/tokens`, {
    body: { client_id: created.client_id, client_secret: created.client_secret }
  })
  const token = (JSON.parse(login.text) as { data: { token: string } }).data.token
  const payment = yield* send("POST", "/payments/", {
    token,
    body: {
      user_id,
      external_id: "base",
      price: { amount: 100, currency: "ARS" },
      payment_options: ["transfer"]
    }
  })
  const paid = (JSON.parse(payment.text) as { data: { id: string; quotes: Array<{ cvu: string }> } }).data
  const auth = yield* Auth.Auth
  const partner = yield* auth.registerPartner(
    Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
      name: "Fuzz Partner",
      redirect_url: "https://partner.example.com/cb"
    })
  )
  const { code } = yield* auth.issueCode(partner.partner.partner_id, user_id)
  const grant = yield* auth.exchangeCode(
    new Auth.CodeExchangeRequest({ code, client_id: partner.client_id, client_secret: partner.client_secret })
  )
  return {
    user_id,
    token,
    partnerToken: grant.token,
    partner_id: partner.partner.partner_id as string,
    params: {
      paymentId: paid.id,
      cvu: paid.quotes[0]!.cvu,
      customer_id: "c1",
      transaction_id: "t1",
      id: user_id,
      user_id,
      schedule_id: "sch_x",
      split_payment_id: "sp_x",
      account_id: "pa_x"
    } as Record<string, string>
  }
})

const STATUS_ROUTES =
  /^(?:POST \/auth\/tokens|GET \/users\/:user_id\/account|PATCH \/users\/:user_id|\w+ \/transactions\/schedules)/

/** Fields that must be new on each create (else it is a 409 before any write). */
const UNIQUE: Readonly<Record<string, (n: number) => string>> = {
  external_id: (n) => `order-${n}`,
  customer_id: (n) => `c-${n}`,
  alias: (n) => `cliente${n}`
}

/** `body` with its unique fields made new, except the one at `path` (the junk's). */
const freshen = (body: unknown, path: ReadonlyArray<string | number>, n: number): unknown => {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return body
  const fresh: Record<string, unknown> = { ...(body as Record<string, unknown>) }
  for (const [key, make] of Object.entries(UNIQUE)) {
    if (key in fresh && path[0] !== key) fresh[key] = make(n)
  }
  return fresh
}

/** Routes whose decodable body succeeds as it is (made fresh): their junk reaches a write. */
const SUCCEEDS = ["POST /payments/", "POST /customers/", "PUT /payments/:paymentId/metadata"]

/** Every probe of the API's routes and pages, sent and checked. */
const fuzz = Effect.gen(function* () {
  const f = yield* fixture
  const bodies = decodable(f.user_id, f.params["cvu"]!)
  let sent = 0
  const probe = (method: string, url: string, options: Parameters<typeof send>[2] = {}) =>
    Effect.map(send(method, url, options), (answer) => {
      sent++
      check(
        `${method} ${url.slice(0, 100)} ${JSON.stringify(options.body ?? options.form ?? "").slice(0, 100)}`,
        answer
      )
    })
  let unique = 0
  for (const id of SUCCEEDS) {
    const [method, path] = id.split(" ") as [string, string]
    const answer = yield* send(method, fill(path, f.params), {
      token: f.token,
      body: freshen(bodies[id], [], ++unique)
    })
    expect(answer.status, `${id} → ${answer.text.slice(0, 300)}`).toBe(200)
  }
  const probes: Array<Effect.Effect<void, never, HttpClient.HttpClient>> = []
  for (const route of routes) {
    const id = `${route.method} ${route.path}`
    const token = STATUS_ROUTES.test(id) ? f.partnerToken : f.token
    const base =
      bodies[id] ??
      Option.match(route.payload, { onNone: () => undefined, onSome: (s) => shapedBodies(s, 1)[0] })
    const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!)
    // Every path parameter, one at a time.
    for (const name of names) {
      for (const segment of junkSegments) {
        const url = fill(route.path, { ...f.params, [name]: segment })
        probes.push(probe(route.method, url, { token, ...(base === undefined ? {} : { body: base }) }))
      }
    }
    // Every query parameter the route takes.
    if (route.query) {
      for (const name of ["user_id", "start_date", "status"]) {
        for (const junk of junkStrings) {
          const query = new URLSearchParams({ user_id: f.user_id, [name]: junk })
          probes.push(probe(route.method, `${fill(route.path, f.params)}?${query.toString()}`, { token }))
        }
      }
    }
    // Every string of a decodable body and of a generated valid one.
    const candidates = [
      ...(base === undefined ? [] : [base]),
      ...Option.match(route.payload, { onNone: () => [], onSome: (s) => shapedBodies(s, 2) })
    ]
    for (const body of candidates) {
      for (const path of stringPaths(body)) {
        for (const junk of junkStrings) {
          probes.push(
            probe(route.method, fill(route.path, f.params), {
              token,
              body: replaceAt(freshen(body, path, ++unique), path, junk)
            })
          )
        }
      }
    }
  }
  // The hosted pages.
  for (const segment of junkSegments) {
    probes.push(probe("GET", `/pay/${segment}`), probe("GET", `/authorize/${segment}`))
  }
  for (const junk of junkStrings) {
    for (const name of ["partner_id", "state", "redirect_uri", "referred_user_id"]) {
      const query = new URLSearchParams({ partner_id: f.partner_id, [name]: junk })
      probes.push(probe("GET", `/authorize?${query.toString()}`))
    }
    for (const name of ["name", "email", "cuit", "password", "state"]) {
      const form = new URLSearchParams({
        partner_id: f.partner_id,
        form: "register",
        consent: "yes",
        name: "Ana",
        email: "ana@example.com",
        cuit: "20123456786",
        password: "password123",
        [name]: junk
      })
      probes.push(probe("POST", "/authorize", { form: form.toString() }))
    }
  }
  yield* Effect.all(probes, { concurrency: 4, discard: true })
  return sent
})

const run = (database: Effect.Effect<string, never, Scope.Scope>) =>
  Effect.gen(function* () {
    const config = yield* configOf({
      COBRO_DATABASE_URL: yield* database,
      COBRO_JOB_INTERVAL: "1 hour",
      COBRO_RATE_LIMITS: "false"
    })
    const sent = yield* fuzz.pipe(Effect.provide(serverLayer(config)))
    expect(sent).toBeGreaterThan(1_000)
  })

describe("fuzz over storage: NUL, lone surrogates, control characters and 10 kB strings", () => {
  it.scopedLive("SQLite", () => run(tempDb), 300_000)
  it.scopedLive.skipIf(!pg)("Postgres", () => run(freshPgUrl), 300_000)
})
