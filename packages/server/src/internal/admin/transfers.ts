/**
 * What an operator reads of the outgoing transfers (schedule sweeps, split payouts) the bank has
 * not settled yet, and of those it has: `cobro transfers list`.
 */
import { Errors, Money, type OutgoingTransfer, Spans } from "@cobro/core"
import { OutgoingTransferRepository } from "@cobro/core/ports"
import { DateTime, Duration, Option } from "effect"
import { pageLimit } from "./input.js"

/** Which transfers to list: `in-flight` (SENDING or PENDING), `stuck` (in flight too long), a state, or all. */
export const transferFilters = [
  "in-flight",
  "stuck",
  "sending",
  "pending",
  "completed",
  "failed",
  "all"
] as const
export type TransferFilter = (typeof transferFilters)[number]

/** How many minutes a transfer may stay in flight before it counts as stuck, unless the operator says. */
export const defaultStuckAfterMinutes = 60

export interface ListTransfersInput {
  readonly status?: string | undefined
  /** Minutes in flight after which a transfer is stuck (`stuck` lists only those); default 60. */
  readonly stuck_after_minutes?: number | undefined
  /** The reference of the last transfer of the previous page. */
  readonly after?: string | undefined
  readonly limit?: number | undefined
}

/** One transfer as the operator reads it; absent values are omitted. */
export interface TransferView {
  readonly reference: string
  readonly purpose: OutgoingTransfer.TransferPurpose
  readonly owner_id: string
  readonly status: OutgoingTransfer.TransferState
  readonly amount: string
  readonly currency: string
  readonly destination: string
  /** In flight for longer than `stuck_after`. */
  readonly stuck: boolean
  /** Since it was recorded, in whole seconds (engine time). */
  readonly age_seconds: number
  readonly sends: number
  readonly checks: number
  readonly bank_transaction_id?: string
  readonly failure_reason?: string
  readonly last_error?: string
  /** When the settle job asks the bank next (in flight only). */
  readonly next_check_at?: string
  readonly created_at: string
  readonly updated_at: string
}

const statesOf: Record<TransferFilter, ReadonlyArray<OutgoingTransfer.TransferState>> = {
  "in-flight": ["SENDING", "PENDING"],
  stuck: ["SENDING", "PENDING"],
  sending: ["SENDING"],
  pending: ["PENDING"],
  completed: ["COMPLETED"],
  failed: ["FAILED"],
  all: ["SENDING", "PENDING", "COMPLETED", "FAILED"]
}

const view = (t: OutgoingTransfer.OutgoingTransfer, now: DateTime.Utc, stuckAfter: Duration.Duration) => {
  const inFlight = t.status === "SENDING" || t.status === "PENDING"
  const ageMillis = Math.max(0, DateTime.toEpochMillis(now) - DateTime.toEpochMillis(t.creation_timestamp))
  return {
    reference: t.reference,
    purpose: t.purpose,
    owner_id: t.owner_id,
    status: t.status,
    amount: Money.format(t.amount),
    currency: t.amount.currency,
    destination: t.destination,
    stuck: inFlight && ageMillis > Duration.toMillis(stuckAfter),
    age_seconds: Math.floor(ageMillis / 1000),
    sends: t.sends,
    checks: t.checks,
    ...(t.bank_transaction_id === null ? {} : { bank_transaction_id: t.bank_transaction_id }),
    ...(t.failure_reason === null ? {} : { failure_reason: t.failure_reason }),
    ...(t.last_error === null ? {} : { last_error: t.last_error }),
    ...(inFlight ? { next_check_at: DateTime.formatIso(t.next_check_at) } : {}),
    created_at: DateTime.formatIso(t.creation_timestamp),
    updated_at: DateTime.formatIso(t.last_modified_timestamp)
  } satisfies TransferView
}

/**
 * Outgoing transfers, oldest first (by when they were recorded), a page at a time: by default the
 * ones in flight. `stuck` keeps the in-flight ones older than `stuck_after_minutes` (default 60):
 * oldest first, they come before every other, so the first one that is not stuck ends the list.
 * `next_after` is there when another page may follow.
 */
export const listTransfers = Spans.fn("Admin.listTransfers")(function* (input: ListTransfersInput) {
  const filter = (input.status ?? "in-flight").toLowerCase()
  if (!(transferFilters as ReadonlyArray<string>).includes(filter)) {
    return yield* Errors.InvalidInput.of(
      "status",
      `must be one of ${transferFilters.join(", ")}, got "${input.status}"`
    )
  }
  const minutes = input.stuck_after_minutes ?? defaultStuckAfterMinutes
  if (!Number.isInteger(minutes) || minutes < 0) {
    return yield* Errors.InvalidInput.of(
      "stuck_after",
      `must be a whole number of minutes, 0 or more, got ${minutes}`
    )
  }
  const stuckAfter = Duration.minutes(minutes)
  const limit = yield* pageLimit(input.limit)
  const repo = yield* OutgoingTransferRepository.OutgoingTransferRepository
  const page = yield* repo.list({
    states: statesOf[filter as TransferFilter],
    after: Option.fromNullable(input.after),
    limit
  })
  const now = yield* DateTime.now
  const views = page.map((t) => view(t, now, stuckAfter))
  const transfers = filter === "stuck" ? views.filter((t) => t.stuck) : views
  const more = page.length === limit && transfers.length === views.length
  return {
    transfers,
    ...(more ? { next_after: page[page.length - 1]!.reference } : {})
  }
})
