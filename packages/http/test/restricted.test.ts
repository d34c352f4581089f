/**
 * `CobroHttp.restricted`: a layer built on the services it names, not on the whole context it is
 * built in; the layers it shares with the rest of the host still built once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { CobroHttp } from "../src/index.js"

class A extends Context.Tag("test/A")<A, string>() {}
class B extends Context.Tag("test/B")<B, string>() {}
class C extends Context.Tag("test/C")<C, string>() {}
class Seen extends Context.Tag("test/Seen")<Seen, ReadonlyArray<string>>() {}
class Level extends Context.Reference<Level>()("test/Level", { defaultValue: () => "default" }) {}

/** What the layer's own build sees of its context: the keys of the tests' services, and `Level`. */
const seen = Layer.effect(
  Seen,
  Effect.map(Effect.context<A | B>(), (context) => [
    ...[...context.unsafeMap.keys()].filter((key) => key.startsWith("test/")).sort(),
    `level=${Context.get(context, Level)}`
  ])
)

const outer = Layer.mergeAll(
  Layer.succeed(A, "a"),
  Layer.succeed(B, "b"),
  Layer.succeed(C, "c"),
  Layer.succeed(Level, "set")
)

const seenThrough = (layer: Layer.Layer<Seen, never, A | B>) =>
  Effect.runPromise(Effect.provide(Seen, layer.pipe(Layer.provide(outer))))

describe("CobroHttp.restricted", () => {
  it("builds the layer on the services it names, those present, and nothing else", async () => {
    expect(await seenThrough(seen)).toEqual(["test/A", "test/B", "test/C", "test/Level", "level=set"])
    expect(await seenThrough(CobroHttp.restricted(seen, [A, B]))).toEqual([
      "test/A",
      "test/B",
      "level=default"
    ])
    // A named service the context does not hold is left out (`B` absent), not made up.
    const onlyA = CobroHttp.restricted(
      Layer.effect(
        Seen,
        Effect.map(Effect.context<A>(), (context) =>
          [...context.unsafeMap.keys()].filter((k) => k.startsWith("test/"))
        )
      ),
      [A, B]
    )
    expect(
      await Effect.runPromise(Effect.provide(Seen, onlyA.pipe(Layer.provide(Layer.succeed(A, "a")))))
    ).toEqual(["test/A"])
  })

  it("a reference named is the one the host set; left out, it is its default", async () => {
    expect(await seenThrough(CobroHttp.restricted(seen, [A, B, Level]))).toEqual([
      "test/A",
      "test/B",
      "test/Level",
      "level=set"
    ])
  })

  it("shares the host's memo map: a layer used inside and outside is built once", async () => {
    let built = 0
    class Shared extends Context.Tag("test/Shared")<Shared, number>() {}
    const shared = Layer.effect(
      Shared,
      Effect.sync(() => ++built)
    )
    class Inside extends Context.Tag("test/Inside")<Inside, number>() {}
    const inside = Layer.effect(Inside, Shared).pipe(Layer.provide(shared))
    const both = Effect.all([Shared, Inside]).pipe(
      Effect.provide(Layer.merge(shared, CobroHttp.restricted(inside, [])))
    )
    expect(await Effect.runPromise(both)).toEqual([1, 1])
    expect(built).toBe(1)
  })

  it("refuses, at compile time, a list that leaves out a service the layer needs", () => {
    const needsC = Layer.effect(
      Seen,
      Effect.map(C, (c) => [c])
    )
    // @ts-expect-error `C` is not named: the argument's type says `{ unnamed: C }`.
    const refused = CobroHttp.restricted(needsC, [A])
    expect(Layer.isLayer(refused)).toBe(true)
    expect(Layer.isLayer(CobroHttp.restricted(needsC, [C]))).toBe(true)
  })
})
