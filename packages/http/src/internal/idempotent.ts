/**
 * `Idempotency-Key` on POST routes: with a key, the route's success body is stored and replayed
 * (with `Idempotent-Replayed: true`) for a retry of the same request; without one, the route
 * just runs. Failures are not stored: a retry after an error runs again.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Idempotency } from "@cobro/core"
import { Effect, Schema } from "effect"
import { ApiError, fromDomain } from "../ApiError.js"

export const idempotent = <A, I, R>(options: {
  /** Whose keys these are: a user id, or `public:<user_id>` on the public route. */
  readonly scope: string
  readonly key: string | undefined
  readonly method: string
  readonly path: string
  /**
   * The decoded body, encoded back: its canonical JSON is the request's fingerprint. Computed
   * only when the request carries a key.
   */
  readonly body: () => unknown
  /** The reply's schema: one value per route (its encoder is compiled once and cached by Effect). */
  readonly schema: Schema.Schema<A, I>
  readonly run: Effect.Effect<A, ApiError, R>
}) =>
  Effect.gen(function* () {
    if (options.key === undefined) return yield* options.run
    const idempotency = yield* Idempotency.Idempotency
    const fingerprint = yield* idempotency.fingerprint(options.method, options.path, options.body())
    const encode = Schema.encode(options.schema)
    const outcome = yield* idempotency
      .run(
        options.scope,
        options.key,
        fingerprint,
        Effect.flatMap(options.run, (value) =>
          Effect.map(Effect.orDie(encode(value)), (json) => ({ status: 200, body: JSON.stringify(json) }))
        )
      )
      .pipe(Effect.mapError((e) => (e instanceof ApiError ? e : fromDomain(e))))
    return HttpServerResponse.text(outcome.body, {
      status: outcome.status,
      contentType: "application/json",
      headers: outcome.replayed ? { "idempotent-replayed": "true" } : {}
    })
  })
