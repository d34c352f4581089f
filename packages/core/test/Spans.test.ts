import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Tracer } from "effect"
import { Spans } from "../src/index.js"

/** A tracer that keeps the names of the spans it is asked to open (Effect's native spans otherwise). */
const recordingTracer = () => {
  const opened: Array<string> = []
  const native = Effect.runSync(Effect.tracer)
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      opened.push(name)
      return native.span(name, parent, context, links, startTime, kind, options)
    },
    context: (f) => f()
  })
  return { tracer, opened }
}

class Counter {
  constructor(readonly step: number) {}
  readonly add = Spans.fn("Counter.add")(function* (this: Counter, n: number) {
    const span = yield* Effect.option(Effect.currentSpan)
    return { sum: n + this.step, span: Option.map(span, (s) => s.name) }
  })
}

describe("Spans", () => {
  it.effect("opens the named span when a tracer is installed", () =>
    Effect.gen(function* () {
      const { opened, tracer } = recordingTracer()
      const counter = new Counter(2)
      const result = yield* Effect.withTracer(counter.add(40), tracer)
      expect(result).toEqual({ sum: 42, span: Option.some("Counter.add") })
      expect(opened).toEqual(["Counter.add"])
      const piped = yield* Effect.withTracer(Spans.span(Effect.succeed(1), "Piped.step"), tracer)
      expect(piped).toBe(1)
      expect(opened).toEqual(["Counter.add", "Piped.step"])
    })
  )

  it.effect("opens none with Effect's default tracer, or with tracing disabled", () =>
    Effect.gen(function* () {
      const counter = new Counter(1)
      expect(yield* counter.add(1)).toEqual({ sum: 2, span: Option.none() })
      const { opened, tracer } = recordingTracer()
      const disabled = yield* counter.add(1).pipe(Effect.withTracer(tracer), Effect.withTracerEnabled(false))
      expect(disabled.span).toEqual(Option.none())
      expect(opened).toEqual([])
    })
  )

  it.effect("keeps the body's arity, its pipeables and its failures", () =>
    Effect.gen(function* () {
      const half = Spans.fn("Half")(
        function* (n: number) {
          if (n % 2 !== 0) return yield* Effect.fail(`odd: ${n}`)
          return n / 2
        },
        Effect.map((n: number) => n + 1)
      )
      expect(half.length).toBe(1)
      expect(yield* half(8)).toBe(5)
      expect(yield* Effect.flip(half(3))).toBe("odd: 3")
    })
  )
})
