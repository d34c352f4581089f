/**
 * The sandbox bank's outgoing transfers: its books (each transfer once, by our reference) and
 * the fault switches a test uses to play a real bank's side of a transfer in flight: accepted
 * and still pending for a number of status queries, applied but never answered (a timeout), and
 * failed after it was accepted.
 */
import { Chunk, type DateTime, HashMap, Option } from "effect"
import type { BankProvider, Ids } from "@cobro/core"

export type SentStatus = "pending" | "completed" | "failed"

/** An outgoing transfer as the sandbox bank's books hold it. */
export type SentTransfer = BankProvider.BankTransferRequest & {
  readonly bank_transaction_id: Ids.BankTransactionId
  readonly status: SentStatus
}

/** An outgoing transfer as its destination account sees it: when it was booked, and where it stands. */
export type Received = SentTransfer & {
  /** The account it went to (an alias resolved). */
  readonly account: string
  readonly booked_at: DateTime.Utc
}

interface Entry {
  readonly transfer: SentTransfer
  /** The account `transfer.to` named when it was booked (an alias resolved). */
  readonly account: string
  readonly booked_at: DateTime.Utc
  /** Status queries it still answers `Pending` before it settles. */
  readonly queriesLeft: number
  /** Set when it is to fail (late) instead of completing. */
  readonly failure: string | null
}

export interface OutgoingState {
  readonly byReference: HashMap.HashMap<string, Entry>
  /** References in the order the transfers arrived. */
  readonly order: Chunk.Chunk<string>
  /** Status queries a new transfer answers `Pending` before it settles; 0: completed at once. */
  readonly holdQueries: number
  /** Sends left that are applied and then answered with `unavailable` (a timeout). */
  readonly timeouts: number
  /** Destinations whose transfers are accepted, then fail with this reason. */
  readonly lateFailures: HashMap.HashMap<string, string>
}

export const emptyOutgoing: OutgoingState = {
  byReference: HashMap.empty(),
  order: Chunk.empty(),
  holdQueries: 0,
  timeouts: 0,
  lateFailures: HashMap.empty()
}

const acceptance = (transfer: SentTransfer): BankProvider.TransferAcceptance => ({
  status: transfer.status === "completed" ? "completed" : "pending",
  bank_transaction_id: transfer.bank_transaction_id
})

/** The transfer already held under `reference`, answered as a repeated send answers it. */
export const previous = (
  state: OutgoingState,
  reference: string
): Option.Option<BankProvider.TransferAcceptance> =>
  Option.map(HashMap.get(state.byReference, reference), (e) => acceptance(e.transfer))

/**
 * Books a new transfer (validated by the caller); `timedOut` when the answer is lost: the
 * transfer stays booked and the caller answers `unavailable`.
 */
export const book = (
  state: OutgoingState,
  transfer: BankProvider.BankTransferRequest,
  bank_transaction_id: Ids.BankTransactionId,
  /** `transfer.to` as the account it names (an alias resolved). */
  account: string,
  booked_at: DateTime.Utc
): {
  readonly answer: BankProvider.TransferAcceptance
  readonly timedOut: boolean
  readonly next: OutgoingState
} => {
  const failure = Option.getOrNull(
    Option.orElse(HashMap.get(state.lateFailures, transfer.to), () =>
      HashMap.get(state.lateFailures, account)
    )
  )
  const held = state.holdQueries > 0 || failure !== null
  const sent: SentTransfer = {
    to: transfer.to,
    amount: transfer.amount,
    reference: transfer.reference,
    bank_transaction_id,
    status: held ? "pending" : "completed"
  }
  const timedOut = state.timeouts > 0
  return {
    answer: acceptance(sent),
    timedOut,
    next: {
      ...state,
      byReference: HashMap.set(state.byReference, transfer.reference, {
        transfer: sent,
        account,
        booked_at,
        queriesLeft: state.holdQueries,
        failure
      }),
      order: Chunk.append(state.order, transfer.reference),
      timeouts: timedOut ? state.timeouts - 1 : state.timeouts
    }
  }
}

const settled = (entry: Entry, status: SentStatus, failure: string | null): Entry => ({
  ...entry,
  transfer: { ...entry.transfer, status },
  queriesLeft: 0,
  failure
})

const statusOf = (entry: Entry): BankProvider.TransferStatus => {
  const id = entry.transfer.bank_transaction_id
  switch (entry.transfer.status) {
    case "pending":
      return { _tag: "Pending", bank_transaction_id: id }
    case "completed":
      return { _tag: "Completed", bank_transaction_id: id }
    case "failed":
      return { _tag: "Failed", bank_transaction_id: id, reason: entry.failure ?? "failed at the bank" }
  }
}

/** A status query: a held transfer counts it down, then completes (or fails, if set to). */
export const query = (
  state: OutgoingState,
  reference: string
): readonly [BankProvider.TransferStatus, OutgoingState] => {
  const found = HashMap.get(state.byReference, reference)
  if (Option.isNone(found)) return [{ _tag: "NotFound" }, state]
  const entry = found.value
  if (entry.transfer.status !== "pending") return [statusOf(entry), state]
  const next: Entry =
    entry.queriesLeft > 0
      ? { ...entry, queriesLeft: entry.queriesLeft - 1 }
      : settled(entry, entry.failure === null ? "completed" : "failed", entry.failure)
  return [statusOf(next), { ...state, byReference: HashMap.set(state.byReference, reference, next) }]
}

/** Settles a pending transfer by hand; a settled or unknown one is left as it is. */
export const settle = (
  state: OutgoingState,
  reference: string,
  outcome: { readonly status: "completed" } | { readonly status: "failed"; readonly reason: string }
): OutgoingState =>
  Option.match(HashMap.get(state.byReference, reference), {
    onNone: () => state,
    onSome: (entry) =>
      entry.transfer.status !== "pending"
        ? state
        : {
            ...state,
            byReference: HashMap.set(
              state.byReference,
              reference,
              settled(entry, outcome.status, outcome.status === "failed" ? outcome.reason : null)
            )
          }
  })

/** The books: every transfer once, in the order it arrived, with its current status. */
export const books = (state: OutgoingState): ReadonlyArray<SentTransfer> =>
  Chunk.toReadonlyArray(
    Chunk.map(
      state.order,
      (reference) => Option.getOrThrow(HashMap.get(state.byReference, reference)).transfer
    )
  )

/**
 * The transfers booked to `account` that have not failed, newest first, at most `limit`: a scan
 * of the books, which hold only the transfers sent (payouts and refunds) since the start.
 */
export const receivedBy = (state: OutgoingState, account: string, limit: number): ReadonlyArray<Received> => {
  const found: Array<Received> = []
  for (const reference of Chunk.toReadonlyArray(Chunk.reverse(state.order))) {
    if (found.length >= limit) break
    const entry = Option.getOrThrow(HashMap.get(state.byReference, reference))
    if (entry.account === account && entry.transfer.status !== "failed") {
      found.push({ ...entry.transfer, account: entry.account, booked_at: entry.booked_at })
    }
  }
  return found
}
