/**
 * Credentials and accounts over HTTP: POST /users/{id}/tokens, the partner code exchange at
 * POST /auth/tokens, GET /users/{user_id}/account and PATCH /users/{user_id}. Each `layer`
 * block has its own server and engine.
 */
import { expect, layer } from "@effect/vitest"
import { Auth, Ids, Onboarding } from "@cobro/core"
import { DateTime, Duration, Effect, Schema, TestClock } from "effect"
import {
  call,
  client,
  type Json,
  merchant,
  partner,
  partnerTokenFor,
  serverLayer,
  tokenFor
} from "./support.js"

const errorBody = (status: number, message: string, data: Record<string, unknown> = {}) => ({
  message,
  error: true,
  code: status,
  data: { detail: expect.any(String), ...data }
})

/** An error in the `{status: "error", error, message, data}` envelope of partner and account routes. */
const statusError = (message: string, data: Record<string, unknown> = {}) => ({
  status: "error",
  error: true,
  message,
  data: { detail: expect.any(String), ...data }
})

/** A code for `user_id` issued through the onboarding consent (which makes `p` the user's partner). */
const consentCode = (
  p: Effect.Effect.Success<ReturnType<typeof partner>>,
  user_id: string,
  referred?: string
) =>
  Effect.flatMap(Onboarding.Onboarding, (onboarding) =>
    onboarding.consent(
      Ids.UserId.make(user_id),
      Schema.decodeUnknownSync(Onboarding.AuthorizeRequest)({
        partner_id: p.partner.partner_id,
        ...(referred === undefined ? {} : { referred_user_id: referred })
      })
    )
  ).pipe(Effect.map((redirect) => redirect.code))

layer(serverLayer())("POST /users/{id}/tokens", (it) => {
  it.effect("good credentials give a 1-hour USR- bearer token that works on the API", () =>
    Effect.gen(function* () {
      const m = yield* merchant("auth_u1")
      const now = yield* DateTime.now
      const r = yield* call("POST", "/users/auth_u1/tokens", {
        body: { client_id: m.client_id, client_secret: m.client_secret }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(Object.keys(body).sort()).toEqual(["code", "data", "error", "message"])
      expect(body).toMatchObject({ message: "token.issued", error: false, code: 200 })
      expect(Object.keys(body.data).sort()).toEqual([
        "expiration_timestamp",
        "expires_in",
        "token",
        "token_type"
      ])
      expect(body.data.token).toMatch(/^USR-[A-Za-z0-9_-]{43}$/)
      expect(body.data.token_type).toBe("Bearer")
      expect(body.data.expires_in).toBe(3600)
      expect(body.data.expiration_timestamp).toBe(DateTime.formatIso(DateTime.add(now, { hours: 1 })))
      const use = yield* call("GET", "/payments/?user_id=auth_u1", { token: body.data.token })
      expect(use.status).toBe(200)
      // It stops working at exactly its expiry.
      yield* TestClock.adjust(Duration.hours(1))
      const late = yield* call("GET", "/payments/?user_id=auth_u1", { token: body.data.token })
      expect(late.status).toBe(401)
      expect(late.body).toEqual(errorBody(401, "auth.token.expired"))
    })
  )

  it.effect(
    "a wrong secret, another user's client id or an unknown user is 401 auth.credentials.invalid",
    () =>
      Effect.gen(function* () {
        const m = yield* merchant("auth_u2")
        const other = yield* merchant("auth_u3")
        const attempts: Array<[string, Record<string, string>]> = [
          ["auth_u2", { client_id: m.client_id, client_secret: "cs_wrong" }],
          ["auth_u2", { client_id: other.client_id, client_secret: other.client_secret }],
          ["auth_nobody", { client_id: m.client_id, client_secret: m.client_secret }]
        ]
        for (const [user, body] of attempts) {
          const r = yield* call("POST", `/users/${user}/tokens`, { body })
          expect(r.status).toBe(401)
          expect(r.body).toEqual(errorBody(401, "auth.credentials.invalid"))
        }
        const missing = yield* call("POST", "/users/auth_u2/tokens", { body: { client_id: m.client_id } })
        expect(missing.status).toBe(400)
        expect(missing.body).toEqual(errorBody(400, "request.invalid", { field: "client_secret" }))
      })
  )

  it.effect("the typed client issues a token too", () =>
    Effect.gen(function* () {
      const m = yield* merchant("auth_u4")
      const api = yield* client()
      const issued = yield* api.userTokens.issue({
        path: { id: Ids.UserId.make("auth_u4") },
        payload: new Auth.TokenRequest({ client_id: m.client_id, client_secret: m.client_secret })
      })
      expect(issued.data.token.startsWith("USR-")).toBe(true)
      expect(issued.data.expires_in).toBe(3600)
      const failed = yield* Effect.flip(
        api.userTokens.issue({
          path: { id: Ids.UserId.make("auth_u4") },
          payload: new Auth.TokenRequest({ client_id: m.client_id, client_secret: "nope" })
        })
      )
      expect(failed).toMatchObject({ _tag: "ApiError", status: 401, key: "auth.credentials.invalid" })
    })
  )
})

layer(serverLayer())("POST /auth/tokens", (it) => {
  it.effect("exchanges a code for a PAR- token in the status envelope", () =>
    Effect.gen(function* () {
      yield* merchant("auth_p1")
      const p = yield* partner("Socio Uno")
      const { code } = yield* Effect.flatMap(Auth.Auth, (auth) =>
        auth.issueCode(p.partner.partner_id, Ids.UserId.make("auth_p1"))
      )
      const r = yield* call("POST", "/auth/tokens", {
        body: { code, client_id: p.client_id, client_secret: p.client_secret }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(Object.keys(body).sort()).toEqual(["data", "error", "status"])
      expect(body).toMatchObject({ status: "success", error: false })
      expect(Object.keys(body.data).sort()).toEqual(["access_token", "token", "user_id"])
      expect(body.data.access_token).toMatch(/^PAR-[A-Za-z0-9_-]{43}$/)
      expect(body.data.token).toBe(body.data.access_token)
      expect(body.data.user_id).toBe("auth_p1")
      const account = yield* call("GET", "/users/auth_p1/account", { token: body.data.access_token })
      expect(account.status).toBe(200)
    })
  )

  it.effect("a code from the onboarding consent carries the partner's referred_user_id", () =>
    Effect.gen(function* () {
      yield* merchant("auth_p2")
      const p = yield* partner("Socio Dos")
      const code = yield* consentCode(p, "auth_p2", "their-user-42")
      const r = yield* call("POST", "/auth/tokens", {
        body: { code, client_id: p.client_id, client_secret: p.client_secret }
      })
      expect(r.status).toBe(200)
      expect((r.body as Json).data).toEqual({
        access_token: expect.stringMatching(/^PAR-/),
        token: expect.stringMatching(/^PAR-/),
        user_id: "auth_p2",
        referred_user_id: "their-user-42"
      })
    })
  )

  it.effect("a reused code is 401 auth.code.used in the status envelope and revokes the first token", () =>
    Effect.gen(function* () {
      yield* merchant("auth_p3")
      const p = yield* partner("Socio Tres")
      const { code } = yield* Effect.flatMap(Auth.Auth, (auth) =>
        auth.issueCode(p.partner.partner_id, Ids.UserId.make("auth_p3"))
      )
      const body = { code, client_id: p.client_id, client_secret: p.client_secret }
      const first = yield* call("POST", "/auth/tokens", { body })
      expect(first.status).toBe(200)
      const token = (first.body as Json).data.access_token as string
      const again = yield* call("POST", "/auth/tokens", { body })
      expect(again.status).toBe(401)
      expect(again.body).toEqual(statusError("auth.code.used"))
      const revoked = yield* call("GET", "/users/auth_p3/account", { token })
      expect(revoked.status).toBe(401)
      expect(revoked.body).toEqual(statusError("auth.token.invalid"))
    })
  )

  it.effect(
    "a wrong secret is 401 and leaves the code usable; an unknown code is 401 auth.code.invalid",
    () =>
      Effect.gen(function* () {
        yield* merchant("auth_p4")
        const p = yield* partner("Socio Cuatro")
        const other = yield* partner("Socio Cinco")
        const { code } = yield* Effect.flatMap(Auth.Auth, (auth) =>
          auth.issueCode(p.partner.partner_id, Ids.UserId.make("auth_p4"))
        )
        const wrong = yield* call("POST", "/auth/tokens", {
          body: { code, client_id: p.client_id, client_secret: "cs_wrong" }
        })
        expect(wrong.status).toBe(401)
        expect(wrong.body).toEqual(statusError("auth.credentials.invalid"))
        // Another partner cannot redeem it with its own credentials.
        const stolen = yield* call("POST", "/auth/tokens", {
          body: { code, client_id: other.client_id, client_secret: other.client_secret }
        })
        expect(stolen.status).toBe(401)
        expect(stolen.body).toEqual(statusError("auth.code.invalid"))
        const unknown = yield* call("POST", "/auth/tokens", {
          body: { code: "no-such-code", client_id: p.client_id, client_secret: p.client_secret }
        })
        expect(unknown.status).toBe(401)
        expect(unknown.body).toEqual(statusError("auth.code.invalid"))
        const right = yield* call("POST", "/auth/tokens", {
          body: { code, client_id: p.client_id, client_secret: p.client_secret }
        })
        expect(right.status).toBe(200)
        const missing = yield* call("POST", "/auth/tokens", { body: { code, client_id: p.client_id } })
        expect(missing.status).toBe(400)
        expect(missing.body).toEqual(statusError("request.invalid", { field: "client_secret" }))
      })
  )

  it.effect("a code is valid for 5 minutes: then 401 auth.code.expired", () =>
    Effect.gen(function* () {
      yield* merchant("auth_p5")
      const p = yield* partner("Socio Seis")
      const { code } = yield* Effect.flatMap(Auth.Auth, (auth) =>
        auth.issueCode(p.partner.partner_id, Ids.UserId.make("auth_p5"))
      )
      yield* TestClock.adjust(Duration.minutes(5))
      const r = yield* call("POST", "/auth/tokens", {
        body: { code, client_id: p.client_id, client_secret: p.client_secret }
      })
      expect(r.status).toBe(401)
      expect(r.body).toEqual(statusError("auth.code.expired"))
    })
  )
})

layer(serverLayer())("GET /users/{user_id}/account", (it) => {
  it.effect("a partner token reads SPEC's Account fields in the status envelope", () =>
    Effect.gen(function* () {
      yield* merchant("auth_a1")
      const p = yield* partner("Socio Cuenta")
      const code = yield* consentCode(p, "auth_a1")
      const exchanged = yield* call("POST", "/auth/tokens", {
        body: { code, client_id: p.client_id, client_secret: p.client_secret }
      })
      const token = (exchanged.body as Json).data.access_token as string
      const r = yield* call("GET", "/users/auth_a1/account", { token })
      expect(r.status).toBe(200)
      expect(r.body).toEqual({
        status: "success",
        error: false,
        data: {
          account_status: "ACTIVE",
          transfer_tolerance: 0,
          user_id: "auth_a1",
          partner_config: {
            commission: 0,
            partner_id: p.partner.partner_id,
            partner_name: "Socio Cuenta",
            partner_slug: p.partner.slug
          }
        }
      })
    })
  )

  it.effect("a user token is 403 account.partner_token.required, even for its own account", () =>
    Effect.gen(function* () {
      const m = yield* merchant("auth_a2")
      const token = yield* tokenFor("auth_a2", m.client_id, m.client_secret)
      const r = yield* call("GET", "/users/auth_a2/account", { token })
      expect(r.status).toBe(403)
      expect(r.body).toEqual(statusError("account.partner_token.required"))
    })
  )

  it.effect("a partner token for another user is 404; no token is 401 in the status envelope", () =>
    Effect.gen(function* () {
      yield* merchant("auth_a3")
      yield* merchant("auth_a4")
      const p = yield* partner("Socio Ajeno")
      const token = yield* partnerTokenFor(p, "auth_a3")
      const other = yield* call("GET", "/users/auth_a4/account", { token })
      expect(other.status).toBe(404)
      expect(other.body).toEqual(statusError("user.not.found"))
      const anonymous = yield* call("GET", "/users/auth_a3/account")
      expect(anonymous.status).toBe(401)
      expect(anonymous.body).toEqual(statusError("auth.token.missing"))
      const bogus = yield* call("GET", "/users/auth_a3/account", { token: "PAR-not-a-token" })
      expect(bogus.status).toBe(401)
      expect(bogus.body).toEqual(statusError("auth.token.invalid"))
    })
  )
})

layer(serverLayer())("PATCH /users/{user_id}", (it) => {
  it.effect("a partner token changes only the fields sent and answers the account", () =>
    Effect.gen(function* () {
      yield* merchant("auth_x1")
      const p = yield* partner("Socio Patch")
      const token = yield* partnerTokenFor(p, "auth_x1")
      const r = yield* call("PATCH", "/users/auth_x1", {
        token,
        body: { alias_prefix: "mi_tien", cancellation_period: 200, transfer_tolerance: 1.5 }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ status: "success", error: false })
      expect(body.data).toMatchObject({
        user_id: "auth_x1",
        alias_prefix: "mi_tien",
        cancellation_period: 200,
        transfer_tolerance: 1.5
      })
      expect(body.data).not.toHaveProperty("cancellation_period_minutes")
      const minutes = yield* call("PATCH", "/users/auth_x1", {
        token,
        body: { cancellation_period_minutes: 5, automatic_cancellation: true }
      })
      expect(minutes.status).toBe(200)
      expect((minutes.body as Json).data).toMatchObject({
        alias_prefix: "mi_tien",
        cancellation_period: 200,
        cancellation_period_minutes: 5
      })
      const read = yield* call("GET", "/users/auth_x1/account", { token })
      expect((read.body as Json).data).toMatchObject({
        cancellation_period_minutes: 5,
        alias_prefix: "mi_tien"
      })
    })
  )

  it.effect("the user's own token may set its alias_prefix", () =>
    Effect.gen(function* () {
      const m = yield* merchant("auth_x2")
      const token = yield* tokenFor("auth_x2", m.client_id, m.client_secret)
      const r = yield* call("PATCH", "/users/auth_x2", { token, body: { alias_prefix: "propio" } })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ status: "success", error: false, data: { alias_prefix: "propio" } })
    })
  )

  it.effect("alias_prefix rules: format and length are 400 on the field, a taken prefix is 409", () =>
    Effect.gen(function* () {
      yield* merchant("auth_x3", { alias_prefix: "ocupado" })
      const m = yield* merchant("auth_x4")
      const token = yield* tokenFor("auth_x4", m.client_id, m.client_secret)
      for (const alias_prefix of ["Tienda", "tienda-1", "nueveeee9", "", "tienda.1"]) {
        const r = yield* call("PATCH", "/users/auth_x4", { token, body: { alias_prefix } })
        expect(r.status).toBe(400)
        expect(r.body).toEqual(statusError("request.invalid", { field: "alias_prefix" }))
      }
      const cleared = yield* call("PATCH", "/users/auth_x4", { token, body: { alias_prefix: null } })
      expect(cleared.status).toBe(400)
      expect(cleared.body).toEqual(statusError("request.invalid", { field: "alias_prefix" }))
      const taken = yield* call("PATCH", "/users/auth_x4", { token, body: { alias_prefix: "ocupado" } })
      expect(taken.status).toBe(409)
      expect(taken.body).toEqual(statusError("user.alias_prefix.taken"))
      const ok = yield* call("PATCH", "/users/auth_x4", { token, body: { alias_prefix: "ocho_888" } })
      expect(ok.status).toBe(200)
    })
  )

  it.effect("cancellation periods outside 1-200 hours or 5-20160 minutes are 400 naming the field", () =>
    Effect.gen(function* () {
      const m = yield* merchant("auth_x5")
      const token = yield* tokenFor("auth_x5", m.client_id, m.client_secret)
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ cancellation_period: 0 }, "cancellation_period"],
        [{ cancellation_period: 201 }, "cancellation_period"],
        [{ cancellation_period: 1.5 }, "cancellation_period"],
        [{ cancellation_period_minutes: 4 }, "cancellation_period_minutes"],
        [{ cancellation_period_minutes: 20161 }, "cancellation_period_minutes"],
        [{ transfer_tolerance: -1 }, "transfer_tolerance"]
      ]
      for (const [body, field] of cases) {
        const r = yield* call("PATCH", "/users/auth_x5", { token, body })
        expect(r.status).toBe(400)
        expect(r.body).toEqual(statusError("request.invalid", { field }))
      }
      for (const body of [
        { cancellation_period: 1 },
        { cancellation_period: 200 },
        { cancellation_period_minutes: 5 },
        { cancellation_period_minutes: 20160 }
      ]) {
        const r = yield* call("PATCH", "/users/auth_x5", { token, body })
        expect(r.status).toBe(200)
      }
    })
  )

  it.effect("another user's account is 404 user.not.found", () =>
    Effect.gen(function* () {
      const m = yield* merchant("auth_x6")
      yield* merchant("auth_x7")
      const token = yield* tokenFor("auth_x6", m.client_id, m.client_secret)
      const r = yield* call("PATCH", "/users/auth_x7", { token, body: { cancellation_period: 10 } })
      expect(r.status).toBe(404)
      expect(r.body).toEqual(statusError("user.not.found"))
    })
  )
})
