/**
 * The sandbox bank's statement of transfers in (`incomingTransfers`, read by reconciliation):
 * each transfer with when it was booked, the newest `statementSize` for `statementRetention`,
 * so the sandbox's memory stays bounded however long it runs.
 *
 * A log appended in place (under the bank's lock, like its account maps): copying a persistent
 * list of the last thousand transfers on every transfer in cost more than the transfer's own
 * bookkeeping. Entries past the bounds are skipped at once and dropped in one step once they
 * are as many as the bound, so a booking costs the same however long the bank runs.
 */
import { DateTime, Duration } from "effect"
import type { BankProvider } from "@cobro/core"

export const statementRetention = Duration.days(7)
export const statementSize = 1000

export interface Statement {
  /** Bookings in order; those before `start` are past the bounds, kept until the next compaction. */
  readonly entries: Array<readonly [DateTime.Utc, BankProvider.IncomingTransfer]>
  start: number
}

export const empty = (): Statement => ({ entries: [], start: 0 })

/** Books `transfer` at `now` in `statement`, the oldest dropped past the bounds; `statement` itself. */
export const book = (
  statement: Statement,
  now: DateTime.Utc,
  transfer: BankProvider.IncomingTransfer
): Statement => {
  const { entries } = statement
  entries.push([now, transfer] as const)
  const oldest = DateTime.subtractDuration(now, statementRetention)
  while (
    entries.length - statement.start > statementSize ||
    DateTime.lessThan(entries[statement.start]![0], oldest)
  ) {
    statement.start++
  }
  if (statement.start >= statementSize) {
    entries.splice(0, statement.start)
    statement.start = 0
  }
  return statement
}

/** The transfers booked from `from` (included) to `to` (excluded). */
export const window = (
  statement: Statement,
  from: DateTime.Utc,
  to: DateTime.Utc
): ReadonlyArray<BankProvider.IncomingTransfer> =>
  statement.entries
    .slice(statement.start)
    .flatMap(([at, transfer]) =>
      DateTime.greaterThanOrEqualTo(at, from) && DateTime.lessThan(at, to) ? [transfer] : []
    )
