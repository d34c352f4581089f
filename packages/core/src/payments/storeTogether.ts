/**
 * Payments of concurrent creations stored together: calls that arrive while a batch is being
 * stored wait, and are stored as the next batch in one unit of work (`PaymentRepository.insertAll`,
 * one statement on SQL), through the group commit of `internal/groupCommit.ts`. Each call answers
 * what `insert` of its payment alone would: stored, or its own `Conflict`.
 */
import { Cause, Chunk, Effect, Either, Exit } from "effect"
import type { Conflict } from "../Errors.js"
import * as GroupCommit from "../internal/groupCommit.js"
import { CvuTaken } from "../bank/CvuDirectory.js"
import type { Payment } from "./Payment.js"
import type { PaymentRepository } from "./PaymentRepository.js"

/** Most payments one unit of work stores. */
export const batchSize = 100

/** Whether a batch died of CVUs the directory holds already, and of nothing else. */
const onlyCvuTaken = (cause: Cause.Cause<unknown>) => {
  const defects = Cause.defects(cause)
  return (
    Chunk.isNonEmpty(defects) &&
    Chunk.every(defects, (d) => d instanceof CvuTaken) &&
    !Cause.isInterrupted(cause)
  )
}

/** `insert` of `repo`, concurrent calls stored together: one alone, several by `insertAll`. */
export const make = (
  repo: PaymentRepository["Type"]
): ((payment: Payment) => Effect.Effect<void, Conflict>) => {
  /**
   * A batch stored as `insert` of each alone would store it. `insertAll` dying on a CVU the
   * directory holds already stored none: each is then stored alone, and only the one whose CVU
   * it was dies. Any other defect (a storage fault) fails every payment of the batch: whether
   * the statement took effect is then unknown, so none is tried again.
   */
  const insertBatch = (batch: ReadonlyArray<Payment>) =>
    Effect.flatMap(Effect.exit(repo.insertAll(batch)), (stored) =>
      Exit.isSuccess(stored)
        ? Effect.succeed(stored.value.map((r) => (Either.isRight(r) ? Exit.void : Exit.fail(r.left))))
        : onlyCvuTaken(stored.cause)
          ? Effect.forEach(batch, (p) => Effect.exit(repo.insert(p)))
          : Effect.succeed(batch.map(() => Exit.failCause(stored.cause) as Exit.Exit<void, Conflict>))
    )

  return GroupCommit.make({
    batchSize,
    run: (batch: ReadonlyArray<Payment>) =>
      batch.length === 1
        ? Effect.map(Effect.exit(repo.insert(batch[0]!)), (exit) => [exit])
        : insertBatch(batch)
  })
}
