/**
 * Named spans that cost nothing when nobody records them.
 *
 * The services name their methods for traces (`Spans.fn("Payments.create")`, the STYLE rule
 * "named spans on service methods"). Effect's own `Effect.fn` and `Effect.withSpan` build a span
 * on every call whatever the tracer: with no tracer installed Effect's default one makes a span
 * that nothing reads, and with tracing disabled (`FiberRef.currentTracerEnabled`) a no-op span,
 * each with a copy of the fiber's context and, for `Effect.fn`, an `Error` to capture the call
 * site. On a request that passes through twenty service methods that was a tenth of its CPU.
 *
 * These helpers open the span only when the fiber records spans: tracing enabled and a tracer
 * installed other than Effect's default (an OTLP exporter, a test's tracer). Otherwise the body
 * runs as it is. Call sites are not captured (`captureStackTrace: false`): a trace names the
 * method, and a defect's stack still points at the code that failed.
 */
import { Effect, type Fiber, FiberRef, type Tracer } from "effect"

/** The tracer every fiber has unless its host installs one: Effect's own, which exports nothing. */
const defaultTracer: Tracer.Tracer = Effect.runSync(Effect.tracer)

/** `effect` in a span named `name` when the running fiber records spans; `effect` itself otherwise. */
export const span: {
  (
    name: string,
    options?: Tracer.SpanOptions
  ): <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(
    effect: Effect.Effect<A, E, R>,
    name: string,
    options?: Tracer.SpanOptions
  ): Effect.Effect<A, E, R>
} = function (...args: Array<unknown>) {
  if (typeof args[0] === "string") {
    const [name, options] = args as [string, Tracer.SpanOptions | undefined]
    return <A, E, R>(effect: Effect.Effect<A, E, R>) => traced(effect, name, options)
  }
  const [effect, name, options] = args as [
    Effect.Effect<unknown, unknown, unknown>,
    string,
    Tracer.SpanOptions?
  ]
  return traced(effect, name, options)
} as never

/** Whether `fiber` records spans: tracing enabled and a tracer other than Effect's default installed. */
export const isRecording = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.getFiberRef(FiberRef.currentTracerEnabled) && fiber.currentTracer !== defaultTracer

const traced = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  name: string,
  options: Tracer.SpanOptions | undefined
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) =>
    isRecording(fiber) ? Effect.withSpan(effect, name, { captureStackTrace: false, ...options }) : effect
  )

/**
 * `Effect.fn(name)` with the span of `span`: a function whose every call runs `body` (a generator,
 * with optional pipeables, as `Effect.fnUntraced` takes them) in a span named `name` when the
 * fiber records spans.
 */
export const fn = (name: string, options?: Tracer.SpanOptions): typeof Effect.fnUntraced =>
  // The signatures are `Effect.fnUntraced`'s own; only the call is wrapped.
  /* eslint-disable @typescript-eslint/no-explicit-any */
  ((body: any, ...pipeables: Array<any>) => {
    const untraced = (Effect.fnUntraced as any)(body, ...pipeables)
    const named = {
      [name](this: unknown, ...args: Array<unknown>) {
        return traced(untraced.apply(this, args), name, options)
      }
    }[name]!
    return Object.defineProperty(named, "length", { value: body.length, configurable: true })
  }) as any
/* eslint-enable @typescript-eslint/no-explicit-any */
