/**
 * Fuzzing every route of `CobroApi` (read from the API definition) with malformed bodies, path
 * parameters, query strings and headers, with and without a valid token. Whatever arrives, the
 * server never answers 5xx, and every answer is the route's documented envelope: an error is
 * `error: true` with a dotted `message` and a string `data.detail` (and `code` equal to the HTTP
 * status on envelope routes); a success is the route's success body.
 *
 * Generated inputs come from `FastCheck` with a fixed seed and a bounded number of samples, so
 * the run is deterministic and quick.
 */
import { HttpBody, HttpClientRequest, type HttpMethod } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Auth, BankAccount } from "@cobro/core"
import { Arbitrary, Chunk, Effect, FastCheck, Option, Schema, SchemaAST, Stream } from "effect"
import { merchant, raw, serverLayer, tokenFor } from "./support.js"
import { apiRoutes, expectSomeError, fillPath, type RawResponse, type Route, styleOf } from "./apiRoutes.js"

const SEED = 20_260_101
const BODY_METHODS = new Set(["POST", "PUT", "PATCH"])
const MiB = 1024 * 1024

// ---------------------------------------------------------------------------------------------
// Inputs

/** Request bodies that are not JSON, or JSON of the wrong kind, sent as `application/json`. */
const rawBodies: ReadonlyArray<string | Uint8Array> = [
  "",
  " ",
  "{",
  "}",
  "not json",
  "{'a': 1}",
  '{"a":1}}',
  "[1, 2",
  '{"a": undefined}',
  "NaN",
  "\u0000",
  "\ufeff{}",
  "null",
  "true",
  "0",
  '"text"',
  "[]",
  "{}",
  "[{}]",
  "[null]",
  "1e400",
  '{"amount": 1e400, "price": {"amount": -1e400, "currency": "ARS"}}',
  '{"amount": 123456789012345678901234567890.123456789, "price": {"amount": 1e-400, "currency": "ARS"}}',
  '{"user_id": {"$gt": ""}, "__proto__": {"admin": true}, "constructor": {"prototype": {}}}',
  '{"name": "\\ud800\\udfff\\ud800", "motive": "\\u202e\\u0000\\uffff 💥 ñandú"}',
  "[".repeat(20_000) + "]".repeat(20_000),
  '{"a":'.repeat(5_000) + "1" + "}".repeat(5_000),
  '{"client_id": "' + "[".repeat(5_000) + '", "name": [' + "{".repeat(70) + "}".repeat(70) + "]}",
  new Uint8Array([0xff, 0xfe, 0x7b, 0x7d]),
  new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])
]

/** Values a field should never hold. */
const junkValues: ReadonlyArray<unknown> = [
  null,
  [],
  {},
  "",
  -1,
  0,
  1e308,
  -1e308,
  5e-324,
  Number.MAX_SAFE_INTEGER + 2,
  true,
  "\ud800 💥 \u202e\u0000",
  "x".repeat(20_000),
  [[[[[[[[[[{ a: [[[[[]]]]] }]]]]]]]]]]
]

/** Path parameter values, already percent-encoded as they go on the wire. */
const junkSegments: ReadonlyArray<string> = [
  "%ZZ",
  "%",
  "%00",
  "%2F",
  "...",
  "a%2F..%2Fb",
  "%E2%80%AE",
  "%F0%9F%92%A9",
  "%C0%AF",
  "%FF%FE",
  "%20",
  "__proto__",
  "x".repeat(4_000)
]

/** Query strings, already encoded. */
const junkQueries: ReadonlyArray<string> = [
  "?user_id=%ZZ",
  "?user_id=",
  "?user_id=a&user_id=b",
  "?user_id[]=1&user_id[x]=2",
  "?start_date=yesterday&end_date=%00&user_id=u",
  "?=&&&==&%",
  "?" + "a=1&".repeat(2_000)
]

const contentTypes: ReadonlyArray<string> = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=xyz",
  "application/xml",
  "application/json; charset=utf-16",
  "application/jsonx",
  "*/*"
]

const badIdempotencyKeys: ReadonlyArray<string> = ["", "k".repeat(256), "clé-ñ", "a\tb", "\u00ff"]

/** JSON values of the encoded (wire) shape of `schema`, with random contents. */
const shaped = (schema: Schema.Schema.Any) =>
  Arbitrary.make(Schema.encodedSchema(schema as Schema.Schema<unknown, unknown, never>))

/** Every path into `value` (object keys and array indices), the value itself first. */
const pathsOf = (
  value: unknown,
  prefix: ReadonlyArray<string | number> = []
): Array<Array<string | number>> => {
  const here = [[...prefix]]
  if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => pathsOf(v, [...prefix, i]))]
  if (value !== null && typeof value === "object") {
    return [...here, ...Object.entries(value).flatMap(([k, v]) => pathsOf(v, [...prefix, k]))]
  }
  return here
}

const replaceAt = (value: unknown, path: ReadonlyArray<string | number>, junk: unknown): unknown => {
  if (path.length === 0) return junk
  const [head, ...rest] = path
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? replaceAt(v, rest, junk) : v))
  const record = value as Record<string, unknown>
  return { ...record, [head!]: replaceAt(record[head!], rest, junk) }
}

/** A wire-shaped body with one field (or element, or the whole) replaced by a junk value. */
const mutated = (schema: Schema.Schema.Any) =>
  FastCheck.tuple(shaped(schema), FastCheck.nat(), FastCheck.constantFrom(...junkValues)).map(
    ([value, n, junk]) => {
      const paths = pathsOf(value)
      return replaceAt(value, paths[n % paths.length]!, junk)
    }
  )

const sample = <A>(arbitrary: FastCheck.Arbitrary<A>, numRuns: number) =>
  FastCheck.sample(arbitrary, { seed: SEED, numRuns })

// ---------------------------------------------------------------------------------------------
// Requests and checks

interface Probe {
  readonly label: string
  readonly method?: HttpMethod.HttpMethod
  readonly path: string
  readonly body?: HttpBody.HttpBody
  readonly headers?: Record<string, string>
}

const json = (value: unknown) => HttpBody.text(JSON.stringify(value), "application/json")
const text = (value: string | Uint8Array, contentType = "application/json") =>
  typeof value === "string" ? HttpBody.text(value, contentType) : HttpBody.uint8Array(value, contentType)

/** Every value of `params` is a non-empty string (an empty one would be another path). */
const nonEmpty = (params: unknown) =>
  Object.values(params as Record<string, unknown>).every((v) => typeof v === "string" && v !== "")

/** A `:param` path template filled with `segment` (already encoded) for every parameter. */
const withSegment = (path: string, segment: string) => path.replace(/:(\w+)/g, () => segment)

const successShape = (route: Route, body: unknown) => {
  if (styleOf(route) === "status") return expect(body).toMatchObject({ status: "success", error: false })
  if (route.id === "PUT /payments/:paymentId/expiration" || route.id === "PUT /payments/:paymentId/price") {
    return expect(body).toMatchObject({ id: expect.any(String), payment_status: expect.any(String) })
  }
  if (route.path.endsWith(".csv")) return expect(body).toMatch(/^[a-z_]+(,[a-z_]+)+\r\n/)
  return expect(body).toMatchObject({ message: expect.any(String), error: false, code: 200 })
}

/** No 5xx, and the route's envelope whatever the status. */
const check = (route: Route, probe: Probe, response: RawResponse) => {
  const where = `${probe.method ?? route.method} ${probe.path.slice(0, 120)} [${probe.label}]`
  expect(response.status, `${where} → ${response.status} ${response.text.slice(0, 300)}`).toBeLessThan(500)
  if (response.status >= 400) return expectSomeError(response, styleOf(route), where)
  expect(response.status, where).toBe(200)
  successShape(route, response.body)
  return undefined
}

const send = (route: Route, probe: Probe, token: string | undefined) => {
  let request = HttpClientRequest.make(probe.method ?? route.method)(probe.path)
  if (probe.body !== undefined) request = HttpClientRequest.setBody(request, probe.body)
  if (probe.headers !== undefined) request = HttpClientRequest.setHeaders(request, probe.headers)
  if (token !== undefined) request = HttpClientRequest.bearerToken(request, token)
  return Effect.map(raw(request), (response) => ({ response, key: check(route, probe, response) }))
}

/** Every `step`-th element: without a token most answers are the same 401, a sample suffices. */
const some = <A>(items: ReadonlyArray<A>, step: number) => items.filter((_, i) => i % step === 0)

/**
 * The probes for `route`. `full` (sent with a valid token) has every fixed input and the
 * generated ones; without it (no token) a sample of the fixed inputs.
 */
const probesFor = (route: Route, full: boolean): ReadonlyArray<Probe> => {
  const e = route.endpoint
  const path = fillPath(route.path)
  const probes: Array<Probe> = []
  const hasBody = BODY_METHODS.has(route.method)
  const step = full ? 1 : 3
  if (hasBody) {
    rawBodies.forEach((body, i) => {
      if (i % step === 0) probes.push({ label: `raw body #${i}`, path, body: text(body) })
    })
    for (const contentType of some(contentTypes, step)) {
      probes.push({ label: `content-type ${contentType}`, path, body: text("{}", contentType) })
    }
    probes.push({ label: "no content-type", path, body: HttpBody.raw('{"a":1}') })
    probes.push({ label: "oversized", path, body: text(`{"a":"${"a".repeat(MiB + 1024)}"}`) })
  }
  for (const segment of route.path.includes(":") ? some(junkSegments, step) : []) {
    probes.push({
      label: `path ${segment.slice(0, 20)}`,
      path: withSegment(route.path, segment),
      body: json({})
    })
  }
  // Routes without query parameters ignore the query: a sample suffices there.
  const queries = Option.isSome(e.urlParamsSchema) ? some(junkQueries, step) : some(junkQueries, 3)
  for (const query of queries) {
    probes.push({ label: `query ${query.slice(0, 30)}`, path: path + query })
  }
  probes.push({ label: "undeclared method", method: "DELETE", path })
  if (!full) return probes

  if (hasBody) {
    probes.push({ label: "oversized, chunked", path, body: chunked(MiB + 1024) })
    sample(FastCheck.jsonValue(), 4).forEach((value, i) =>
      probes.push({ label: `json value #${i}`, path, body: json(value) })
    )
  }
  if (Option.isSome(e.payloadSchema)) {
    const schema = e.payloadSchema.value
    sample(shaped(schema), 5).forEach((value, i) =>
      probes.push({ label: `shaped body #${i}`, path, body: json(value) })
    )
    sample(mutated(schema), 8).forEach((value, i) =>
      probes.push({ label: `mutated body #${i}`, path, body: json(value) })
    )
  }
  if (Option.isSome(e.pathSchema)) {
    sample(shaped(e.pathSchema.value).filter(nonEmpty), 3).forEach((params, i) =>
      probes.push({
        label: `shaped path #${i}`,
        path: fillPath(route.path, params as Record<string, string>),
        body: json({})
      })
    )
  }
  if (Option.isSome(e.urlParamsSchema)) {
    sample(shaped(e.urlParamsSchema.value), 5).forEach((params, i) =>
      probes.push({
        label: `shaped query #${i}`,
        path: `${path}?${new URLSearchParams(params as Record<string, string>).toString()}`
      })
    )
  }
  return probes
}

/** A JSON body of `size` bytes sent in chunks without a content-length. */
const chunked = (size: number) => {
  const chunk = new TextEncoder().encode("a".repeat(64 * 1024))
  const count = Math.ceil(size / chunk.length)
  return HttpBody.stream(
    Stream.concat(
      Stream.make(new TextEncoder().encode('{"a":"')),
      Stream.concat(
        Stream.fromChunk(Chunk.makeBy(count, () => chunk)),
        Stream.make(new TextEncoder().encode('"}'))
      )
    ),
    "application/json"
  )
}

// ---------------------------------------------------------------------------------------------
// Requests that decode, to reach the Idempotency-Key check of every idempotent route

const cvu = BankAccount.makeCvu("0000003", "0000000000001")
const cbu = BankAccount.makeCbu("2850590", "0000000000001")

const decodable = (user_id: string): Readonly<Record<string, { path: string; body?: unknown }>> => ({
  "POST /payments/": {
    path: "/payments/",
    body: { user_id, price: { amount: 100, currency: "ARS" }, payment_options: ["transfer"] }
  },
  "POST /customers/": {
    path: "/customers/",
    body: { user_id, alias: "cli", customer_id: "c1", name: "Ana" }
  },
  "POST /payments/:paymentId/refunds": {
    path: `/payments/VAR-${user_id}-x/refunds`,
    body: { refund_type: "PARTIAL", amount: "1.00", currency: "ARS" }
  },
  "POST /transactions/schedules": {
    path: "/transactions/schedules",
    body: { schedule_type: "payout", frequency: "daily", payload: { address: cbu } }
  },
  "POST /split/payments": { path: "/split/payments", body: { external_id: "s1" } },
  "POST /split/payments/:split_payment_id/payouts": {
    path: "/split/payments/sp_x/payouts",
    body: { payouts: [{ account_id: "pa_x", amount: 1 }] }
  },
  "POST /split/accounts": { path: "/split/accounts", body: [{ address: cbu }] },
  "POST /split/accounts/verify": {
    path: "/split/accounts/verify",
    body: { request_id: "vr_x", code: "123456" }
  },
  "POST /split/accounts/:account_id/disable": { path: "/split/accounts/pa_x/disable" },
  "POST /cvu/:cvu/faucet": { path: `/cvu/${cvu}/faucet`, body: { amount: 10 } },
  "POST /sandbox/bank-accounts": { path: "/sandbox/bank-accounts", body: { cbu } },
  "POST /sandbox/clock/advance": { path: "/sandbox/clock/advance", body: { seconds: 60 } },
  "POST /webhooks/deliveries/:event_id/replay": { path: "/webhooks/deliveries/evt_x/replay" }
})

const declaresIdempotencyKey = (route: Route) =>
  Option.exists(route.endpoint.headersSchema, (schema) => {
    const ast = SchemaAST.encodedAST(schema.ast)
    return SchemaAST.isTypeLiteral(ast) && ast.propertySignatures.some((p) => p.name === "idempotency-key")
  })

// ---------------------------------------------------------------------------------------------

let merchants = 0

/** A merchant with a user token and a partner token. */
const tokens = Effect.gen(function* () {
  const n = ++merchants
  const created = yield* merchant(`fuzz_${n}`)
  const user_id = created.user.user_id
  const auth = yield* Auth.Auth
  const partner = yield* auth.registerPartner(
    Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
      name: `Fuzz Partner ${n}`,
      redirect_url: "https://partner.example.com/cb"
    })
  )
  const { code } = yield* auth.issueCode(partner.partner.partner_id, user_id)
  const grant = yield* auth.exchangeCode(
    new Auth.CodeExchangeRequest({ code, client_id: partner.client_id, client_secret: partner.client_secret })
  )
  return {
    user_id,
    user: yield* tokenFor(user_id, created.client_id, created.client_secret),
    partner: grant.token
  }
})

layer(serverLayer({ rateLimits: false }))((it) => {
  describe("fuzz: every route, malformed input → a documented 4xx envelope, never a 5xx", () => {
    for (const route of apiRoutes) {
      it.effect(route.id, () =>
        Effect.gen(function* () {
          const t = yield* tokens
          const valid = styleOf(route) === "status" ? t.partner : t.user
          const requests = [
            ...probesFor(route, false).map((probe) => [probe, undefined] as const),
            ...probesFor(route, true).map((probe) => [probe, valid] as const)
          ]
          // Independent requests, several at a time: each answer is checked on its own.
          const answers = yield* Effect.forEach(requests, ([probe, token]) => send(route, probe, token), {
            concurrency: 4
          })
          const keys = new Set(answers.flatMap(({ key }) => (key === undefined ? [] : [key])))
          // The fuzz reached past authentication: not every answer was a 401.
          expect([...keys].some((k) => !k.startsWith("auth."))).toBe(true)
        })
      )
    }

    it("the idempotent routes are exactly those that declare an Idempotency-Key header", () => {
      const declared = apiRoutes.filter(declaresIdempotencyKey).map((r) => r.id)
      expect(declared.sort()).toEqual(Object.keys(decodable("u")).sort())
    })

    it.effect("a malformed Idempotency-Key is a 400 on field Idempotency-Key on every idempotent route", () =>
      Effect.gen(function* () {
        const t = yield* tokens
        for (const route of apiRoutes.filter(declaresIdempotencyKey)) {
          const call = decodable(t.user_id)[route.id]!
          const token = styleOf(route) === "status" ? t.partner : t.user
          for (const key of badIdempotencyKeys) {
            const probe: Probe = {
              label: `Idempotency-Key ${JSON.stringify(key).slice(0, 20)}`,
              path: call.path,
              headers: { "idempotency-key": key },
              ...(call.body === undefined ? {} : { body: json(call.body) })
            }
            const { response } = yield* send(route, probe, route.secured ? token : undefined)
            expect({ route: route.id, key, status: response.status, body: response.body }).toMatchObject({
              status: 400,
              body: { message: "request.invalid", data: { field: "Idempotency-Key" } }
            })
          }
        }
      })
    )

    it.effect(
      "a body nested deeper than 64 levels is request.body.malformed; brackets in strings do not count",
      () =>
        Effect.gen(function* () {
          const route = apiRoutes.find((r) => r.id === "POST /users/:id/tokens")!
          const send_ = (body: string) =>
            send(route, { label: "depth", path: "/users/u/tokens", body: text(body) }, undefined)
          const deep = (n: number) => `{"client_id": ${"[".repeat(n)}${"]".repeat(n)}, "client_secret": "s"}`
          // 64 levels in all (the object and 63 arrays) is still a body that merely does not decode.
          expect((yield* send_(deep(63))).response.body).toMatchObject({ message: "request.invalid" })
          for (const n of [64, 3_000, 100_000]) {
            const { response } = yield* send_(deep(n))
            expect([n, response.status, response.body]).toMatchObject([
              n,
              400,
              { message: "request.body.malformed", data: { field: "body" } }
            ])
          }
          const inString = `{"client_id": "${"[{".repeat(5_000)}", "client_secret": "s"}`
          expect((yield* send_(inString)).response.body).toMatchObject({
            message: "auth.credentials.invalid"
          })
        })
    )

    it.effect("an unknown path is a 404 route.not.found in the path's envelope", () =>
      Effect.gen(function* () {
        const route = apiRoutes.find((r) => r.id === "GET /payments/")!
        // A path that is not valid percent-encoding (`/%ZZ`) is a 400: `unstorable.test.ts`.
        for (const path of ["/", "/nope", "/payments/a/b/c/d", "/openapi.json/x", "/users"]) {
          const { response } = yield* send(route, { label: "unknown", path }, undefined)
          expect([path, response.status]).toEqual([path, 404])
          expect((response.body as { message: string }).message).toBe("route.not.found")
        }
      })
    )

    it.effect("a path with a method it does not take is a 405 naming its methods in Allow", () =>
      Effect.gen(function* () {
        const cases = [
          ["DELETE", "/payments/", "GET, POST"],
          ["PUT", "/payments/VAR-x-1/public", "GET"],
          ["GET", "/auth/tokens", "POST"],
          ["GET", "/users/u1", "PATCH"]
        ] as const
        for (const [method, path, allow] of cases) {
          const response = yield* raw(HttpClientRequest.make(method)(path))
          expect([method, path, response.status, response.headers["allow"]]).toEqual([
            method,
            path,
            405,
            allow
          ])
          expect(response.body).toMatchObject({ error: true, message: "method.not.allowed" })
        }
        // The status envelope on the partner and account routes, as for any error there.
        const partner = yield* raw(HttpClientRequest.get("/auth/tokens"))
        expect(partner.body).toMatchObject({ status: "error", error: true, message: "method.not.allowed" })
      })
    )
  })
})
