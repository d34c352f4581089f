/**
 * How a split payout hears the outcome of its transfer (`OutgoingTransfers`' settle step, inside
 * its unit of work, after the money moved from held to the bank or back to the split's
 * balance): SUCCESS with the bank's id or FAILED with the bank's reason; the payout that settles
 * the instruction's last one writes the split's result and "Split payouts result".
 */
import { DateTime, Effect, Option } from "effect"
import { SplitPaymentId } from "../Ids.js"
import type { Settlement } from "../outgoing/OutgoingTransfer.js"
import { Outbox } from "../webhooks/Outbox.js"
import * as Split from "./Split.js"
import { SplitRepository } from "./SplitRepository.js"
import { emitSplitEvent } from "./splitShared.js"

/** With no payout left PENDING: the result, the lease dropped, "Split payouts result". */
export const finishIfDone = (
  repo: SplitRepository["Type"],
  outbox: Outbox["Type"],
  split: Split.SplitPayment,
  payouts: ReadonlyArray<Split.SplitPayout>,
  now: DateTime.Utc
) =>
  Effect.gen(function* () {
    if (payouts.some((p) => p.status === "PENDING")) return Option.none<Split.PayoutResult>()
    const result = Split.resultOf(payouts)
    yield* Split.transition(Split.payoutMachine, Split.payoutStatusOf(split), result)
    const done = new Split.SplitPayment({
      ...split,
      payout_status: result,
      lease_until: null,
      last_modified_timestamp: now
    })
    yield* repo.update(done)
    yield* emitSplitEvent(outbox, done, "split.payouts_result", {
      message: "split.payouts_result",
      split_payment_id: done.split_payment_id,
      external_id: done.external_id,
      payout_status: result
    })
    return Option.some(result)
  })

/**
 * Marks one PENDING payout of a PROCESSING split SUCCESS or FAILED and finishes the split when
 * it was the last; `none` when the payout is not PENDING (or the split not PROCESSING).
 */
export const settlePayout = (
  repo: SplitRepository["Type"],
  outbox: Outbox["Type"],
  id: Split.SplitPayment["split_payment_id"],
  payoutId: string,
  outcome:
    | { readonly _tag: "Completed"; readonly bank_transaction_id: Split.SplitPayout["bank_transaction_id"] }
    | { readonly _tag: "Failed"; readonly reason: string }
) =>
  Effect.gen(function* () {
    const found = yield* repo.findByIdForUpdate(id)
    if (Option.isNone(found) || found.value.payout_status !== "PROCESSING") return Option.none()
    const payouts = yield* repo.payoutsOf(id)
    const payout = payouts.find((p) => p.payout_id === payoutId)
    if (payout === undefined || payout.status !== "PENDING") return Option.none()
    const now = yield* DateTime.now
    const status = yield* Split.transition(
      Split.payoutStateMachine,
      payout.status,
      outcome._tag === "Completed" ? "SUCCESS" : "FAILED"
    )
    const settled = new Split.SplitPayout({
      ...payout,
      status,
      bank_transaction_id: outcome._tag === "Completed" ? outcome.bank_transaction_id : null,
      failure_reason: outcome._tag === "Failed" ? outcome.reason : null,
      executed_timestamp: now
    })
    yield* repo.updatePayout(settled)
    const finished = yield* finishIfDone(
      repo,
      outbox,
      found.value,
      payouts.map((p) => (p.payout_id === payoutId ? settled : p)),
      now
    )
    return Option.some({ status, finished: Option.isSome(finished) })
  })

export const make = Effect.gen(function* () {
  const repo = yield* SplitRepository
  const outbox = yield* Outbox
  const settlement: Settlement = {
    completedKind: "split.payout.sent",
    failedKind: "split.payout.failed",
    settled: (transfer, outcome) =>
      settlePayout(repo, outbox, SplitPaymentId.make(transfer.owner_id), transfer.reference, outcome).pipe(
        Effect.orDie,
        Effect.flatMap(
          Option.match({
            onNone: () =>
              Effect.dieMessage(
                `split payout ${transfer.reference} is not PENDING while its transfer settles`
              ),
            onSome: (settled) => Effect.succeed(settled.finished)
          })
        )
      )
  }
  return settlement
})
