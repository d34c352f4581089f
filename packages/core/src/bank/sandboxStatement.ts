/**
 * The sandbox bank's statement of transfers in (`incomingTransfers`, read by reconciliation):
 * each transfer with when it was booked, the newest `statementSize` for `statementRetention`,
 * so the sandbox's memory stays bounded however long it runs.
 */
import { Chunk, DateTime, Duration } from "effect"
import type { IncomingTransfer } from "./BankProvider.js"

export const statementRetention = Duration.days(7)
export const statementSize = 1000

export type Statement = Chunk.Chunk<readonly [DateTime.Utc, IncomingTransfer]>

export const emptyStatement: Statement = Chunk.empty()

/** `statement` with `transfer` booked at `now`, the oldest dropped past the bounds. */
export const book = (statement: Statement, now: DateTime.Utc, transfer: IncomingTransfer): Statement => {
  const oldest = DateTime.subtractDuration(now, statementRetention)
  const kept = Chunk.dropWhile(statement, ([at]) => DateTime.lessThan(at, oldest))
  return Chunk.append(
    Chunk.size(kept) >= statementSize ? Chunk.drop(kept, Chunk.size(kept) - statementSize + 1) : kept,
    [now, transfer] as const
  )
}

/** The transfers booked from `from` (included) to `to` (excluded). */
export const window = (
  statement: Statement,
  from: DateTime.Utc,
  to: DateTime.Utc
): ReadonlyArray<IncomingTransfer> =>
  Chunk.toReadonlyArray(statement).flatMap(([at, transfer]) =>
    DateTime.greaterThanOrEqualTo(at, from) && DateTime.lessThan(at, to) ? [transfer] : []
  )
