/**
 * `Idempotency-Key` on POST routes: with a key, the route runs under core's `Idempotency`, which
 * records its result encoded by the route's reply schema; this module makes the HTTP answer of
 * that outcome, the first time and on a replay alike: 200, JSON, the recorded text byte for
 * byte, and `Idempotent-Replayed: true` on a replay. Without a key, the route just runs.
 * Failures are not recorded: a retry after an error runs again. A handler that answers through
 * `Idempotency.answering` has its answer recorded in the unit of work that commits its operation
 * (core's `Idempotency.committing`), so it survives a crash right after that commit.
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
    const outcome = yield* idempotency
      .run(options.scope, options.key, fingerprint, options.schema, options.run)
      .pipe(Effect.mapError((e) => (e instanceof ApiError ? e : fromDomain(e))))
    return HttpServerResponse.text(outcome.result, {
      status: 200,
      contentType: "application/json",
      headers: outcome.replayed ? { "idempotent-replayed": "true" } : {}
    })
  })
