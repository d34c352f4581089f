/**
 * An optional field without a value is left out of every answer, never sent as `null` (SPEC
 * types these fields as a string or an object; a client reading them as optional-but-not-nullable
 * rejects a `null`). The only `null`s are the ones SPEC itself shows: a split payment's
 * `hold_until` and `payout_status` before its payouts instruction (in its reads and in the
 * "Split funds received" event). Checked twice: over real HTTP, walking every JSON answer of every
 * resource; and on the API definition, walking every success schema of every route, so a new
 * nullable field cannot slip in unnoticed.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Auth, Ids, Jobs, Outbox, Wire } from "@cobro/core"
import { Effect, Schema, SchemaAST, TestClock } from "effect"
import { apiRoutes } from "./apiRoutes.js"
import {
  bankHolder,
  call,
  client,
  type Json,
  merchant,
  merchantCuit,
  partner,
  partnerTokenFor,
  secondFactorCode,
  serverLayer,
  tokenFor
} from "./support.js"

/** Field names SPEC shows as `null` (a split payment before its payouts instruction). */
const specNulls: ReadonlySet<string> = new Set(["hold_until", "payout_status"])

/** The path of every `null` in a JSON value (`data.payouts[0].failure_reason`). */
const nullsIn = (value: unknown, path = ""): Array<string> => {
  if (value === null) return [path]
  if (Array.isArray(value)) return value.flatMap((v, i) => nullsIn(v, `${path}[${i}]`))
  if (typeof value === "object") {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
      nullsIn(v, path === "" ? k : `${path}.${k}`)
    )
  }
  return []
}

const lastSegment = (path: string) =>
  path
    .split(".")
    .pop()!
    .replace(/\[\d+\]$/, "")

/** The `null`s of a JSON value that SPEC does not show. */
const unexpectedNulls = (value: unknown, allowed: ReadonlySet<string> = new Set()) =>
  nullsIn(value).filter((path) => !allowed.has(lastSegment(path)))

/** A call that must succeed; its body must hold no `null` but the `allowed` ones. */
const answer = (
  method: "GET" | "POST" | "PUT" | "PATCH",
  path: string,
  options: { readonly body?: unknown; readonly token?: string; readonly allowed?: ReadonlySet<string> } = {}
) =>
  Effect.gen(function* () {
    const r = yield* call(method, path, options)
    expect(r.status, `${method} ${path}: ${r.text}`).toBe(200)
    expect(unexpectedNulls(r.body, options.allowed), `${method} ${path}`).toEqual([])
    return r.body as Json
  })

const payment = { price: { amount: 1500, currency: "ARS" }, payment_options: ["transfer"] }

layer(serverLayer())("no null in answers", (it) => {
  it.effect("payments, public payments, their three PUTs, the faucet and the payment's webhook", () =>
    Effect.gen(function* () {
      const m = yield* merchant("nul_p1")
      const token = yield* tokenFor("nul_p1", m.client_id, m.client_secret)
      // Created without webhook_url, redirect_url, motive, client_data, team_id, partner_id.
      const created = (yield* answer("POST", "/payments/", { body: { user_id: "nul_p1", ...payment } })).data
      const id = created.id as string
      const read = (yield* answer("GET", `/payments/${id}`, { token })).data
      for (const field of ["webhook_url", "redirect_url", "motive", "client_data", "team_id", "partner_id"]) {
        expect(read).not.toHaveProperty(field)
      }
      expect(read).toMatchObject({ id, payment_status: "PENDING", metadata: { motive: [] } })
      yield* answer("GET", "/payments/?user_id=nul_p1", { token })
      const publicView = (yield* answer("GET", `/payments/${id}/public`)).data
      expect(publicView).not.toHaveProperty("motive")
      expect(publicView).not.toHaveProperty("redirect_url")
      yield* answer("PUT", `/payments/${id}/expiration`, {
        token,
        body: { expiration_timestamp: "2099-01-01T00:00:00.000Z" }
      })
      yield* answer("PUT", `/payments/${id}/price`, { token, body: { currency: "ARS", amount: 1000 } })
      // The first motive of a payment created without one has no previous value: `previous` is absent.
      const edited = (yield* answer("PUT", `/payments/${id}/metadata`, { token, body: { motive: "Pedido" } }))
        .data
      expect(edited.metadata.motive).toHaveLength(1)
      expect(edited.metadata.motive[0]).not.toHaveProperty("previous")
      const sent = (yield* answer("POST", `/cvu/${created.quotes[0].cvu}/faucet`, {
        token,
        body: { amount: 1000 }
      })).data
      expect(sent).toMatchObject({ outcome: "credited", target: "payment", target_id: id })
      expect(sent).not.toHaveProperty("reason")
      const paid = (yield* answer("GET", `/payments/${id}`, { token })).data
      expect(paid).toMatchObject({ payment_status: "SUCCESS", transactions: [{ amount: "1000.00" }] })
      yield* answer("GET", `/payments/${id}/public`)
      // A transfer to an expired payment's CVU bounces back to the sender: no target.
      const late = (yield* answer("POST", "/payments/", {
        body: { user_id: "nul_p1", external_id: "late", ...payment }
      })).data
      yield* TestClock.adjust("6 days")
      yield* Effect.flatMap(Jobs.Jobs, (jobs) => jobs.runDue())
      const fresh = yield* tokenFor("nul_p1", m.client_id, m.client_secret)
      const bounced = (yield* answer("POST", `/cvu/${late.quotes[0].cvu}/faucet`, {
        token: fresh,
        body: { amount: 5 }
      })).data
      expect(bounced).toMatchObject({ outcome: "bounced" })
      expect(bounced).not.toHaveProperty("target")
      expect(bounced).not.toHaveProperty("target_id")
    })
  )

  it.effect(
    "fixed customers (created with contact and webhook_url sent as null), their list and transactions",
    () =>
      Effect.gen(function* () {
        const m = yield* merchant("nul_c1", { alias_prefix: "nulos" })
        const token = yield* tokenFor("nul_c1", m.client_id, m.client_secret)
        // `null` for the optional contact and webhook_url is still accepted in requests.
        const created = (yield* answer("POST", "/customers/", {
          token,
          body: {
            user_id: "nul_c1",
            alias: "juan",
            customer_id: "c-1",
            name: "Juan",
            contact: null,
            webhook_url: null
          }
        })).data
        yield* answer("GET", "/customers/?user_id=nul_c1", { token })
        const changed = (yield* answer("PATCH", "/customers/c-1/alias", {
          token,
          body: { alias: "juana", create_new_cvu: false }
        })).data
        expect(changed.alias).toBe("juana")
        yield* answer("POST", `/cvu/${created.bank_info.cvu}/faucet`, { token, body: { amount: 300 } })
        const events = (yield* (yield* Outbox.Outbox).list(0, 100_000)).map((e) => e.event)
        const received = events.find((e) => e.type === "customer.payment_received")!
        yield* answer("GET", `/customers/c-1/transactions/${String(received.payload["transactionId"])}`, {
          token
        })
      })
  )

  it.effect(
    "tokens, an account without alias prefix, periods or schedule, its PATCH, and payout schedules",
    () =>
      Effect.gen(function* () {
        const m = yield* merchant("nul_a1")
        yield* answer("POST", "/users/nul_a1/tokens", {
          body: { client_id: m.client_id, client_secret: m.client_secret }
        })
        const p = yield* partner("Socio Nulo")
        const token = yield* partnerTokenFor(p, "nul_a1")
        const account = (yield* answer("GET", "/users/nul_a1/account", { token })).data
        for (const field of [
          "alias_prefix",
          "cancellation_period",
          "cancellation_period_minutes",
          "payout_schedule"
        ]) {
          expect(account).not.toHaveProperty(field)
        }
        expect(account).toMatchObject({ account_status: "ACTIVE", user_id: "nul_a1" })
        // Periods sent as `null` (clearing them) are still accepted, and the answer leaves them out.
        const patched = (yield* answer("PATCH", "/users/nul_a1", {
          token,
          body: { cancellation_period: null, cancellation_period_minutes: null, automatic_cancellation: true }
        })).data
        expect(patched).not.toHaveProperty("cancellation_period")
        const own = yield* bankHolder("Tienda nul_a1", merchantCuit)
        const schedule = (yield* answer("POST", "/transactions/schedules", {
          token,
          body: { schedule_type: "payout", frequency: "daily", payload: { address: own } }
        })).data
        yield* answer("GET", "/transactions/schedules", { token })
        yield* answer("GET", `/transactions/schedules/${schedule.schedule_id}`, { token })
        yield* answer("PATCH", `/transactions/schedules/${schedule.schedule_id}`, {
          token,
          body: { schedule_status: "inactive" }
        })
        yield* answer("GET", "/users/nul_a1/account", { token })
      })
  )

  it.effect("POST /auth/tokens", () =>
    Effect.gen(function* () {
      yield* merchant("nul_x1")
      const p = yield* partner("Socio Canje")
      const { code } = yield* (yield* Auth.Auth).issueCode(p.partner.partner_id, Ids.UserId.make("nul_x1"))
      yield* answer("POST", "/auth/tokens", {
        body: { code, client_id: p.client_id, client_secret: p.client_secret }
      })
    })
  )

  it.effect("split payments, payout accounts and payouts; null only where SPEC shows it", () =>
    Effect.gen(function* () {
      const m = yield* merchant("nul_s1")
      const token = yield* tokenFor("nul_s1", m.client_id, m.client_secret)
      // Without webhook_url, by the merchant itself (no partner_id).
      const split = (yield* answer("POST", "/split/payments", {
        token,
        body: { external_id: "s-1" },
        allowed: specNulls
      })).data
      expect(split).toMatchObject({ payout_status: null, hold_until: null })
      expect(split).not.toHaveProperty("webhook_url")
      expect(split).not.toHaveProperty("partner_id")
      yield* answer("POST", `/cvu/${split.cvu}/faucet`, { token, body: { amount: 1000 } })
      yield* answer("GET", `/split/payments/${split.split_payment_id}`, { token, allowed: specNulls })
      // One account without a label; none verified or disabled yet.
      const a = yield* bankHolder("Ana Proveedora")
      const b = yield* bankHolder("Beto Logistica")
      const request = (yield* answer("POST", "/split/accounts", {
        token,
        body: [{ address: a }, { address: b, label: "Beto" }]
      })).data
      expect(request.accounts[0]).not.toHaveProperty("label")
      expect(request.accounts[0]).not.toHaveProperty("activation_timestamp")
      expect(request.accounts[0]).not.toHaveProperty("disabled_timestamp")
      const code = yield* secondFactorCode(request.request_id)
      const verified = (yield* answer("POST", "/split/accounts/verify", {
        token,
        body: { request_id: request.request_id, code }
      })).data
      expect(verified.accounts[0]).toHaveProperty("activation_timestamp")
      const accounts = (yield* answer("GET", "/split/accounts", { token })).data.accounts as Array<Json>
      const [first, second] = request.accounts.map((x: Json) => x.account_id as string)
      expect(accounts).toHaveLength(2)
      // A pending payout has no bank transaction, failure or execution time yet.
      const instructed = (yield* answer("POST", `/split/payments/${split.split_payment_id}/payouts`, {
        token,
        body: { payouts: [{ account_id: first, amount: 500 }] }
      })).data
      expect(instructed.payout_status).toBe("ON_HOLD")
      expect(instructed.payouts[0]).not.toHaveProperty("bank_transaction_id")
      expect(instructed.payouts[0]).not.toHaveProperty("executed_timestamp")
      yield* TestClock.adjust("13 hours")
      yield* Effect.flatMap(Jobs.Jobs, (jobs) => jobs.runDue())
      const fresh = yield* tokenFor("nul_s1", m.client_id, m.client_secret)
      const done = (yield* answer("GET", `/split/payments/${split.split_payment_id}`, { token: fresh })).data
      expect(done.payout_status).toBe("SUCCESS")
      expect(done.payouts[0]).toHaveProperty("bank_transaction_id")
      expect(done.payouts[0]).not.toHaveProperty("failure_reason")
      const disabled = (yield* answer("POST", `/split/accounts/${second}/disable`, { token: fresh })).data
      expect(disabled).toHaveProperty("disabled_timestamp")
    })
  )

  it.effect(
    "the typed client reads an absent field as null; a payment's optional fields still refuse null",
    () =>
      Effect.gen(function* () {
        const m = yield* merchant("nul_t1")
        const token = yield* tokenFor("nul_t1", m.client_id, m.client_secret)
        const created = (yield* answer("POST", "/payments/", { body: { user_id: "nul_t1", ...payment } }))
          .data
        const api = yield* client(token)
        const read = yield* api.payments.get({ path: { paymentId: Ids.PaymentId.make(created.id) } })
        expect(read.data).toMatchObject({
          redirect_url: null,
          motive: null,
          client_data: null,
          partner_id: null
        })
        // Never accepted before: a `null` there is still 400 on the field, not taken as absent.
        const refused = yield* call("POST", "/payments/", {
          body: { user_id: "nul_t1", ...payment, motive: null }
        })
        expect(refused.status).toBe(400)
        expect(refused.body).toMatchObject({ message: "request.invalid", data: { field: "motive" } })
      })
  )

  it.effect("webhook bodies hold no null but the split's hold_until SPEC shows", () =>
    Effect.gen(function* () {
      const events = (yield* (yield* Outbox.Outbox).list(0, 100_000)).map((e) => e.event)
      // The bodies of the events of every test above (the layer's engine is shared).
      expect(new Set(events.map((e) => e.type))).toEqual(
        new Set([
          "payment.updated",
          "customer.payment_received",
          "split.funds_received",
          "split.payouts_result"
        ])
      )
      for (const event of events) {
        // The delivery sends exactly `JSON.stringify(payload)`.
        const body: unknown = JSON.parse(JSON.stringify(event.payload))
        const allowed = event.type === "split.funds_received" ? new Set(["hold_until"]) : new Set<string>()
        expect(unexpectedNulls(body, allowed), event.type).toEqual([])
      }
    })
  )
})

// ---------------------------------------------------------------------------------------------
// The API definition

/** The names of the properties a schema may encode as `null` (`Wire.Omittable` fields excluded). */
const nullableProperties = (ast: SchemaAST.AST, seen = new Set<SchemaAST.AST>()): Array<string> => {
  if (seen.has(ast)) return []
  seen.add(ast)
  const canBeNull = (type: SchemaAST.AST): boolean =>
    SchemaAST.isLiteral(type)
      ? type.literal === null
      : SchemaAST.isUnion(type)
        ? type.types.some(canBeNull)
        : SchemaAST.isRefinement(type) || SchemaAST.isTransformation(type)
          ? canBeNull(type.from)
          : false
  switch (ast._tag) {
    case "TypeLiteral":
      return ast.propertySignatures.flatMap((p) => {
        // An optional key whose type is annotated with a surrogate is `Wire.Omittable`: it
        // decodes a `null` but encodes none (its encoding is checked over HTTP above).
        const omittable = p.isOptional && SchemaAST.getSurrogateAnnotation(p.type)._tag === "Some"
        const own = canBeNull(p.type) && !omittable ? [String(p.name)] : []
        return [...own, ...nullableProperties(p.type, seen)]
      })
    case "Union":
      return ast.types.flatMap((t) => nullableProperties(t, seen))
    case "TupleType":
      return [...ast.elements.map((e) => e.type), ...ast.rest.map((r) => r.type)].flatMap((t) =>
        nullableProperties(t, seen)
      )
    case "Refinement":
      return nullableProperties(ast.from, seen)
    case "Transformation":
      return nullableProperties(ast.from, seen)
    case "Suspend":
      return nullableProperties(ast.f(), seen)
    default:
      return []
  }
}

describe("the API definition", () => {
  it("no success schema of any route can send null, but for the fields SPEC shows as null", () => {
    const found = apiRoutes.flatMap((route) =>
      nullableProperties(route.endpoint.successSchema.ast)
        .filter((name) => !specNulls.has(name))
        .map((name) => `${route.id}: ${name}`)
    )
    expect(found).toEqual([])
  })

  it("Wire.Omittable: null leaves the key out; a missing key or a stored null decodes as null", () => {
    const S = Schema.Struct({ a: Wire.Omittable(Schema.String), b: Wire.Omittable(Wire.Timestamp) })
    expect(Schema.encodeSync(S)({ a: null, b: null })).toEqual({})
    expect(Schema.encodeSync(S)({ a: "x", b: null })).toEqual({ a: "x" })
    expect(Schema.decodeUnknownSync(S)({})).toEqual({ a: null, b: null })
    expect(Schema.decodeUnknownSync(S)({ a: null, b: null })).toEqual({ a: null, b: null })
    expect(() => Schema.decodeUnknownSync(S)({ a: 1 })).toThrow()
  })
})
