/**
 * Calls to BIND over `HttpClient`: a bearer token from the login (renewed before it expires, and
 * once more after a 401), a timeout on every call, retries with `Schedule` only where the caller
 * says the call is idempotent, and every failure as a `BankError` (never a defect).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { BankProvider } from "@cobro/core"
import { Clock, Duration, Effect, Option, Redacted, Ref, Schedule, Schema } from "effect"
import type { BindSettings } from "../BindConfig.js"
import { TokenResponse } from "./api.js"

type BankError = BankProvider.BankError
type Reason = BankError["reason"]

export const bankError = (reason: Reason, message: string): BankError =>
  new BankProvider.BankError({ reason, message })

/** The bank's own words, cut short: enough to act on, never a dump. */
const excerpt = (body: string): string => (body.length > 200 ? `${body.slice(0, 200)}…` : body)

export interface Answer {
  readonly status: number
  readonly body: string
}

export interface Call {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE"
  readonly path: string
  readonly body?: unknown
  readonly urlParams?: Readonly<Record<string, string>>
  /** Request headers besides the bearer token (the statement takes its parameters there). */
  readonly headers?: Readonly<Record<string, string>>
  /** Retried on `unavailable` only when true. */
  readonly idempotent: boolean
  /** What the call is, for messages ("transfer", "alias assignment"). */
  readonly what: string
}

/** The status's `BankError` when the operation gives it no meaning of its own. */
export const statusError = (what: string, answer: Answer): BankError =>
  answer.status === 408 || answer.status === 429 || answer.status >= 500
    ? bankError("unavailable", `BIND answered ${answer.status} to the ${what}: ${excerpt(answer.body)}`)
    : bankError("rejected", `BIND refused the ${what} (${answer.status}): ${excerpt(answer.body)}`)

/** Decodes a 2xx JSON answer; anything that does not decode is `unavailable`. */
export const decode =
  <A, I>(schema: Schema.Schema<A, I>, what: string) =>
  (answer: Answer): Effect.Effect<A, BankError> =>
    Effect.try({
      try: () => JSON.parse(answer.body) as unknown,
      catch: () => bankError("unavailable", `BIND's answer to the ${what} is not JSON`)
    }).pipe(
      Effect.flatMap(Schema.decodeUnknown(schema)),
      Effect.mapError((e) =>
        e._tag === "BankError"
          ? e
          : bankError("unavailable", `BIND's answer to the ${what} has an unexpected shape: ${e.message}`)
      )
    )

interface Token {
  readonly value: Redacted.Redacted
  /** Epoch millis after which it is renewed. */
  readonly renewAt: number
}

export const make = (settings: BindSettings) =>
  Effect.gen(function* () {
    const http = yield* HttpClient.HttpClient
    const token = yield* Ref.make(Option.none<Token>())
    const loginLock = yield* Effect.makeSemaphore(1)
    const timeoutMillis = Duration.toMillis(settings.timeout)

    /** One HTTP exchange under the timeout; transport failures and timeouts are `unavailable`. */
    const exchange = (request: HttpClientRequest.HttpClientRequest, what: string) =>
      http.execute(request).pipe(
        Effect.flatMap((response) =>
          Effect.map(response.text, (body) => ({ status: response.status, body }))
        ),
        Effect.timeoutFail({
          duration: settings.timeout,
          onTimeout: () =>
            bankError("unavailable", `BIND did not answer the ${what} within ${timeoutMillis} ms`)
        }),
        Effect.catchTag("RequestError", "ResponseError", (e) =>
          Effect.fail(bankError("unavailable", `could not reach BIND for the ${what}: ${e.reason}`))
        )
      )

    const login = Effect.gen(function* () {
      const form: Record<string, string> = {
        grant_type: "client_credentials",
        client_id: settings.clientId,
        client_secret: Redacted.value(settings.clientSecret)
      }
      if (settings.scope !== "") form.scope = settings.scope
      const answer = yield* exchange(
        HttpClientRequest.post(settings.tokenUrl).pipe(HttpClientRequest.bodyUrlParams(form)),
        "login"
      )
      if (answer.status < 200 || answer.status >= 300) {
        // The token endpoint's body may echo the request: it is not quoted.
        return yield* Effect.fail(
          answer.status >= 500 || answer.status === 429
            ? bankError("unavailable", `BIND's login answered ${answer.status}`)
            : bankError(
                "unavailable",
                `BIND refused the login (${answer.status}): check the client id and secret`
              )
        )
      }
      const body = yield* decode(TokenResponse, "login")(answer)
      const now = yield* Clock.currentTimeMillis
      const fresh: Token = {
        value: Redacted.make(body.access_token),
        renewAt: now + body.expires_in * 1000 - Duration.toMillis(settings.refreshBefore)
      }
      yield* Ref.set(token, Option.some(fresh))
      return fresh.value
    })

    /** The current token, logging in when there is none or it is due for renewal. */
    const bearer = loginLock.withPermits(1)(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const current = yield* Ref.get(token)
        return Option.isSome(current) && now < current.value.renewAt ? current.value.value : yield* login
      })
    )

    const send = (call: Call, value: Redacted.Redacted) => {
      let request = HttpClientRequest.make(call.method)(new URL(call.path, settings.baseUrl)).pipe(
        HttpClientRequest.bearerToken(value),
        HttpClientRequest.acceptJson
      )
      if (call.urlParams !== undefined) request = HttpClientRequest.setUrlParams(request, call.urlParams)
      if (call.headers !== undefined) request = HttpClientRequest.setHeaders(request, call.headers)
      if (call.body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, call.body)
      return exchange(request, call.what)
    }

    const once = (call: Call) =>
      Effect.gen(function* () {
        const first = yield* send(call, yield* bearer)
        if (first.status !== 401) return first
        // The token was revoked or expired early: drop it, log in once more and repeat once.
        yield* Ref.set(token, Option.none())
        const second = yield* send(call, yield* bearer)
        return second.status === 401
          ? yield* Effect.fail(
              bankError("unavailable", `BIND refused a fresh token for the ${call.what} (401)`)
            )
          : second
      })

    const retry = Schedule.exponential(settings.retryBase).pipe(
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(settings.retries))
    )

    /** Performs `call`; an answer of any status but 401 comes back for the operation to read. */
    const request = (call: Call): Effect.Effect<Answer, BankError> =>
      call.idempotent
        ? once(call).pipe(
            Effect.flatMap((answer) =>
              answer.status >= 500 || answer.status === 429 || answer.status === 408
                ? Effect.fail(statusError(call.what, answer))
                : Effect.succeed(answer)
            ),
            Effect.retry({ schedule: retry, while: (e) => e.reason === "unavailable" })
          )
        : once(call)

    return { request } as const
  })

export type Client = Effect.Effect.Success<ReturnType<typeof make>>
