/**
 * A layer built on a few named services of its context rather than on all of it.
 *
 * What an HTTP layer is built in becomes every request's context. `HttpApiBuilder.group` keeps
 * the whole context its group was built in and merges it into each request's; the HTTP server
 * starts each request on the whole context it was served in. Built inside a host's engine, both
 * held every service of it (about 75: repositories, the ledger, the outbox, the SQL client…),
 * and every provide on a request's way (its `HttpServerRequest`, its scope, the group's merge,
 * the principal, a statement's scope) copies that map again: a quarter of the memory a faucet
 * transfer allocated was such copies.
 *
 * `restricted(layer, tags)` builds `layer` in a context holding only `tags` (those present) and
 * what `layer` builds itself. Its layers are still shared with the rest of the host through the
 * memo map the host is building with (the API's router, its middleware registry).
 *
 * `tags` must name every service `layer` needs; its requirement type is checked against them.
 * What the types cannot see must be named too: a `Context.Reference` (it would silently fall
 * back to its default) and a service read with `Effect.serviceOption`.
 */
import { Context, Effect, Layer } from "effect"

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyTag = Context.Tag<any, any>

/** The services of `R` that `Tags` does not name: `never` when they are all named. */
export type Unnamed<R, Tags extends ReadonlyArray<AnyTag>> = Exclude<R, Context.Tag.Identifier<Tags[number]>>

/** `full`'s services named by `tags` (those it has). */
const pick = <R>(full: Context.Context<R>, tags: ReadonlyArray<AnyTag>): Context.Context<R> => {
  let small = Context.empty() as Context.Context<unknown>
  for (const tag of tags) {
    // `unsafeMap.has`, not `getOption`: a `Context.Reference` absent here is left to its default.
    if (full.unsafeMap.has(tag.key)) small = Context.add(small, tag, Context.unsafeGet(full, tag))
  }
  return small as Context.Context<R>
}

export const restricted = <const Tags extends ReadonlyArray<AnyTag>, A = never, E = never, R = never>(
  // `A` defaults to `never`: a layer of no output (`Layer<never, …>`) gives inference nothing.
  layer: Layer.Layer<A, E, R>,
  tags: [Unnamed<R, Tags>] extends [never] ? Tags : { readonly unnamed: Unnamed<R, Tags> }
): Layer.Layer<A, E, R> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const memoMap = yield* Layer.CurrentMemoMap
      const scope = yield* Effect.scope
      // `mapInputContext` replaces the context (where `provide` would add to it).
      return yield* Effect.mapInputContext(
        Layer.buildWithMemoMap(layer, memoMap, scope),
        (full: Context.Context<R>) => pick(full, tags as Tags)
      )
    })
  )
