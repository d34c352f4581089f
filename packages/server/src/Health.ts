/**
 * The probes of an orchestrator or a load balancer, plain JSON, no auth, no rate limit:
 *
 * - `GET /healthz` → 200 `{"status":"ok"}`: the process is alive and its event loop answers
 *   (answering is the proof; nothing else is asked).
 * - `GET /readyz` → 200 `{"status":"ready", …}` when the database answers within `checkTimeout`
 *   and holds every migration of this version, and the server is not stopping; otherwise 503
 *   `{"status":"not_ready", …}` with what failed. The reason a database did not answer goes to
 *   the log, not to the (unauthenticated) answer.
 *
 * They are router routes beside the API (like the sandbox routes), not `HttpApi` endpoints: the
 * server owns what they check (its storage, its shutdown), so an embedding host does not inherit
 * them, and they stay out of the OpenAPI document.
 *
 * On shutdown `/readyz` turns 503 first; the server then keeps accepting for `shutdownDelay`
 * (`COBRO_SHUTDOWN_DELAY`), so a balancer that polls it stops sending traffic, before the
 * listener closes (see `Server.layer`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { StorageHealth } from "@cobro/core/ports"
import { Context, Duration, Effect, Either, Layer, Ref } from "effect"

/** How long `/readyz` waits for the database before it answers 503. */
export const checkTimeout = Duration.seconds(2)

/** Whether the server is stopping: set once, at the start of a shutdown. */
export class Lifecycle extends Context.Tag("@cobro/server/Lifecycle")<
  Lifecycle,
  { readonly stopping: Ref.Ref<boolean> }
>() {}

/** One value for the whole server (a module constant, so every use shares one build). */
export const layerLifecycle: Layer.Layer<Lifecycle> = Layer.effect(
  Lifecycle,
  Effect.map(Ref.make(false), (stopping) => Lifecycle.of({ stopping }))
)

/**
 * Marks the server stopping when its scope closes, then waits `delay` with the port still open.
 * Built after the port's layer, so on shutdown it runs before the port stops accepting.
 */
export const stopFirst = (delay: Duration.DurationInput): Layer.Layer<never, never, Lifecycle> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const { stopping } = yield* Lifecycle
      yield* Effect.addFinalizer(() =>
        Effect.zipRight(
          Ref.set(stopping, true),
          Duration.toMillis(Duration.decode(delay)) > 0
            ? Effect.zipRight(
                Effect.logInfo(`stopping: /readyz answers 503; the port closes in ${Duration.format(delay)}`),
                Effect.sleep(delay)
              )
            : Effect.void
        )
      )
    })
  )

/** The body of `/readyz`. */
export interface Readiness {
  readonly status: "ready" | "not_ready"
  /** `ok`, or `unavailable` when the database did not answer in time or answered an error. */
  readonly database: "ok" | "unavailable"
  /** The newest migration applied (absent when the database did not answer) and the one this version needs. */
  readonly schema: { readonly current: boolean; readonly applied?: number; readonly required?: number }
  readonly stopping: boolean
}

/** Asks the storage and the lifecycle; `ready` only when all three are fine. */
export const readiness: Effect.Effect<Readiness, never, StorageHealth.StorageHealth | Lifecycle> = Effect.gen(
  function* () {
    const health = yield* StorageHealth.StorageHealth
    const { stopping } = yield* Lifecycle
    const checked = yield* health.check.pipe(
      Effect.timeoutFail({
        duration: checkTimeout,
        onTimeout: () =>
          new StorageHealth.StorageUnavailable({
            message: `the database did not answer within ${Duration.format(checkTimeout)}`
          })
      }),
      Effect.tapError((error) => Effect.logWarning(`readiness: ${error.message}`)),
      Effect.either
    )
    const isStopping = yield* Ref.get(stopping)
    const schema = Either.match(checked, {
      onLeft: () => ({ current: false }),
      onRight: (version) => ({ current: StorageHealth.isCurrent(version), ...version })
    })
    const ready = Either.isRight(checked) && schema.current && !isStopping
    return {
      status: ready ? "ready" : "not_ready",
      database: Either.isRight(checked) ? "ok" : "unavailable",
      schema,
      stopping: isStopping
    } as const
  }
)

const noStore = { "cache-control": "no-store" }

/** `/healthz` and `/readyz` on the API's router. */
export const routes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const context = yield* Effect.context<StorageHealth.StorageHealth | Lifecycle>()
    yield* router.get(
      "/healthz",
      Effect.succeed(HttpServerResponse.unsafeJson({ status: "ok" }, { headers: noStore }))
    )
    yield* router.get(
      "/readyz",
      Effect.map(Effect.provide(readiness, context), (body) =>
        HttpServerResponse.unsafeJson(body, { status: body.status === "ready" ? 200 : 503, headers: noStore })
      )
    )
  })
)
