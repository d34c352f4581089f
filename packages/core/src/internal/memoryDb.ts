/**
 * The transactional core of the in-memory adapters. Every table is a `TxRef`; a unit of work
 * runs under one lock (serializable isolation) with a journal of the first value of every ref
 * it touched, and a failure, defect or interruption restores them: a failed unit of work leaves
 * no trace. Nested transactions behave as savepoints.
 */
import { Chunk, Context, DateTime, Effect, Either, Exit, FiberRef, Layer, Option } from "effect"
import { globalValue } from "effect/GlobalValue"

interface Journal {
  readonly db: MemoryDbShape
  readonly saved: Map<TxRef<unknown>, unknown>
}

const currentJournal = globalValue(Symbol.for("@cobro/core/internal/memoryDb/journal"), () =>
  FiberRef.unsafeMake<Option.Option<Journal>>(Option.none())
)

export interface MemoryDbShape {
  /** Runs `effect` inside the current unit of work, or alone under the lock. */
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Runs `effect` as a unit of work (a savepoint when nested). */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Whether the calling fiber is inside a unit of work of this database. */
  readonly inTransaction: Effect.Effect<boolean>
}

export class MemoryDb extends Context.Tag("@cobro/core/internal/MemoryDb")<MemoryDb, MemoryDbShape>() {}

export class TxRef<A> {
  constructor(
    private readonly db: MemoryDbShape,
    private value: A
  ) {}

  get get(): Effect.Effect<A> {
    return this.db.run(Effect.sync(() => this.value))
  }

  modify<B>(f: (a: A) => readonly [B, A]): Effect.Effect<B> {
    return this.db.run(
      Effect.flatMap(FiberRef.get(currentJournal), (journal) =>
        Effect.sync(() => {
          if (Option.isSome(journal) && !journal.value.saved.has(this as TxRef<unknown>)) {
            journal.value.saved.set(this as TxRef<unknown>, this.value)
          }
          const [b, next] = f(this.value)
          this.value = next
          return b
        })
      )
    )
  }

  update(f: (a: A) => A): Effect.Effect<void> {
    return this.modify((a) => [undefined, f(a)] as const)
  }

  /**
   * Like `update`, unless `f` refuses the change (`Either.left`): then the ref keeps its value
   * and the effect fails with the refusal (an insert a unique key refuses).
   */
  updateOrFail<E>(f: (a: A) => Either.Either<A, E>): Effect.Effect<void, E> {
    return Effect.flatten(
      this.modify((a): readonly [Effect.Effect<void, E>, A] =>
        Either.match(f(a), {
          onLeft: (e) => [Effect.fail(e), a] as const,
          onRight: (next) => [Effect.void, next] as const
        })
      )
    )
  }

  /** Used only by the journal to roll back. */
  restore(value: A): void {
    this.value = value
  }
}

export const make = Effect.gen(function* () {
  const lock = yield* Effect.makeSemaphore(1)

  const inThisDb = (journal: Option.Option<Journal>): journal is Option.Some<Journal> =>
    Option.isSome(journal) && journal.value.db === db

  const withJournal = <A, E, R>(parent: Option.Option<Journal>, effect: Effect.Effect<A, E, R>) => {
    const journal: Journal = { db, saved: new Map() }
    return Effect.locally(effect, currentJournal, Option.some(journal)).pipe(
      Effect.onExit((exit) =>
        Effect.sync(() => {
          if (Exit.isFailure(exit)) {
            for (const [ref, value] of journal.saved) ref.restore(value)
          } else if (Option.isSome(parent)) {
            for (const [ref, value] of journal.saved) {
              if (!parent.value.saved.has(ref)) parent.value.saved.set(ref, value)
            }
          }
        })
      )
    )
  }

  const db: MemoryDbShape = {
    run: (effect) =>
      Effect.flatMap(FiberRef.get(currentJournal), (journal) =>
        inThisDb(journal) ? effect : lock.withPermits(1)(withJournal(Option.none(), effect))
      ),
    transaction: (effect) =>
      Effect.flatMap(FiberRef.get(currentJournal), (journal) =>
        inThisDb(journal)
          ? withJournal(journal, effect)
          : lock.withPermits(1)(withJournal(Option.none(), effect))
      ),
    inTransaction: Effect.map(FiberRef.get(currentJournal), inThisDb)
  }
  return db
})

export const layer: Layer.Layer<MemoryDb> = Layer.effect(MemoryDb, make)

export const makeRef = <A>(initial: A): Effect.Effect<TxRef<A>, never, MemoryDb> =>
  Effect.map(MemoryDb, (db) => new TxRef(db, initial))

/** A time as a fixed-width string of epoch milliseconds, so index keys sort as the times do. */
export const timeKey = (t: DateTime.Utc): string => DateTime.toEpochMillis(t).toString().padStart(16, "0")

/**
 * Up to `limit` items of an append-only log after position `after`, each with its position
 * (counted from 1), as `entry` builds them: how the memory adapters read the ledger's journal
 * and the outbox in order.
 */
export const logAfter = <A, B>(
  log: Chunk.Chunk<A>,
  after: number,
  limit: number,
  entry: (item: A, position: number) => B
): ReadonlyArray<B> =>
  Chunk.toReadonlyArray(
    Chunk.map(Chunk.take(Chunk.drop(log, after), limit), (item, i) => entry(item, after + i + 1))
  )
