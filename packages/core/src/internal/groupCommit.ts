/**
 * Group commit: calls that arrive while a batch is being run wait in a queue; the caller whose
 * batch ends hands the waiting ones (up to `batchSize`) to the first of them, which runs them as
 * its batch and answers each its own exit. A lone call runs at once, alone. Each batch runs in a
 * caller's fiber, with its clock, services and span parent: no background worker acts on anyone's
 * behalf.
 *
 * - A batch, once taken, runs to its end (uninterruptibly).
 * - A caller interrupted while it waits leaves the queue, and its item is not run; one
 *   interrupted just as it was handed the next batch still runs it, so nobody behind it waits
 *   forever.
 * - The caller about to take the queue first lets the host's event loop finish the turn it is in
 *   (`endOfTurn`): the requests whose bytes arrived in that turn reach the queue before it takes
 *   it. Where a batch never yields (SQLite answers synchronously) a yield to the fibers already
 *   ready was not enough: a server reads each connection's request in an I/O callback of its
 *   own, and each request ran to its answer before the next callback read the next one, so every
 *   batch held one item.
 */
import { Deferred, Effect, Exit } from "effect"

/** What a waiting caller is told: its exit, or to run the next batch. */
type Signal<B> = B | typeof lead

const lead = Symbol.for("@cobro/core/internal/groupCommit/lead")

/**
 * Resumes once the host's event loop has run the I/O callbacks of its current turn: node's (and
 * Bun's, Deno's) `setImmediate`, a macrotask elsewhere. No clock is involved: a `TestClock` does
 * not hold it.
 */
const schedule: (f: () => void) => unknown =
  typeof globalThis.setImmediate === "function" ? globalThis.setImmediate : (f) => globalThis.setTimeout(f, 0)
const endOfTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  schedule(() => resume(Effect.void))
})

interface Turn<A, B, E> {
  readonly item: A
  /** How a waiting caller is told (a caller that leads at once never waits: it has none). */
  readonly signal: Deferred.Deferred<Signal<B>, E> | undefined
  /** Waiting, in a batch under way, or told to run the next batch. */
  state: "queued" | "taken" | "lead"
}

/**
 * A function that submits one item and answers its exit, running items submitted together
 * through `run` (which answers one exit per item, in order; it should not fail, and if it dies,
 * every item of its batch dies with it).
 *
 * A lone call is on every request's path, so this stays lean: no generator, and a `Deferred`
 * only for a caller that has to wait.
 */
export const make = <A, B, E>(options: {
  readonly batchSize: number
  readonly run: (items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<Exit.Exit<B, E>>>
}): ((item: A) => Effect.Effect<B, E>) => {
  const queue: Array<Turn<A, B, E>> = []
  let leading = false

  /** Hands the queue on (or leaves it), tells every other turn of `batch` its exit; answers `own`'s. */
  const settle = (
    own: Turn<A, B, E>,
    batch: ReadonlyArray<Turn<A, B, E>>,
    settled: Exit.Exit<ReadonlyArray<Exit.Exit<B, E>>>
  ): Exit.Exit<B, E> => {
    const next = queue[0]
    if (next === undefined) leading = false
    else {
      next.state = "lead"
      Deferred.unsafeDone(next.signal!, Exit.succeed(lead))
    }
    let mine: Exit.Exit<B, E> = Exit.die("an item missing from its own batch")
    for (let i = 0; i < batch.length; i++) {
      const exit = Exit.isSuccess(settled) ? settled.value[i]! : Exit.failCause(settled.cause)
      if (batch[i] === own) mine = exit
      else Deferred.unsafeDone(batch[i]!.signal!, exit)
    }
    return mine
  }

  /** Runs the batch at the head of the queue, which holds `own`; answers `own`'s exit. */
  const runBatch = (own: Turn<A, B, E>): Effect.Effect<B, E> =>
    Effect.flatten(
      Effect.uninterruptible(
        Effect.zipRight(
          endOfTurn,
          Effect.suspend(() => {
            const batch = queue.splice(0, options.batchSize)
            for (const turn of batch) turn.state = "taken"
            return Effect.map(Effect.exit(options.run(batch.map((turn) => turn.item))), (settled) =>
              settle(own, batch, settled)
            )
          })
        )
      )
    )

  /** A waiting caller interrupted: out of the queue, or the batch it was handed run anyway. */
  const abandon = (turn: Turn<A, B, E>) =>
    Effect.suspend(() => {
      if (turn.state === "lead") return Effect.ignore(runBatch(turn))
      if (turn.state === "queued") queue.splice(queue.indexOf(turn), 1)
      return Effect.void
    })

  /** Waits for its exit, or to run the next batch. */
  const wait = (turn: Turn<A, B, E>): Effect.Effect<B, E> =>
    Effect.flatMap(
      Effect.onInterrupt(Deferred.await(turn.signal!), () => abandon(turn)),
      (signal) => (signal === lead ? runBatch(turn) : Effect.succeed(signal as B))
    )

  return (item) =>
    Effect.withFiberRuntime((fiber) => {
      if (!leading) {
        leading = true
        const turn: Turn<A, B, E> = { item, signal: undefined, state: "queued" }
        queue.push(turn)
        return runBatch(turn)
      }
      const turn: Turn<A, B, E> = { item, signal: Deferred.unsafeMake(fiber.id()), state: "queued" }
      queue.push(turn)
      return wait(turn)
    })
}
