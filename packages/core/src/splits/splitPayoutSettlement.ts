/**
 * How a split payout hears the outcome of its transfer (`OutgoingTransfers`' settle step, inside
 * its unit of work, after the money moved from held to the bank or back to the split's
 * balance): SUCCESS with the bank's id or FAILED with the bank's reason; the payout that settles
 * the instruction's last one writes the split's result and "Split payouts result".
 */
import { DateTime, Effect, Option } from "effect"
import { SplitPaymentId } from "../Ids.js"
import { ownerSettlement } from "../outgoing/Settlement.js"
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

/** A payout waiting for its transfer, with its split (locked) and the split's other payouts. */
interface Waiting {
  readonly split: Split.SplitPayment
  readonly payouts: ReadonlyArray<Split.SplitPayout>
  readonly payout: Split.SplitPayout
}

/**
 * The split payouts' settlement over `repo` and `outbox`: marks one PENDING payout of a
 * PROCESSING split SUCCESS or FAILED and finishes the split when it was the last. Split
 * execution settles with it the payouts that never leave (their account was disabled).
 */
export const makeSplitPayoutSettlement = (repo: SplitRepository["Type"], outbox: Outbox["Type"]) =>
  ownerSettlement<Waiting>({
    purpose: "split_payout",
    completedKind: "split.payout.sent",
    failedKind: "split.payout.failed",
    name: "split payout",
    lock: (transfer) =>
      Effect.gen(function* () {
        const id = SplitPaymentId.make(transfer.owner_id)
        const found = yield* repo.findByIdForUpdate(id)
        if (Option.isNone(found) || found.value.payout_status !== "PROCESSING") return Option.none()
        const payouts = yield* repo.payoutsOf(id)
        return Option.map(
          Option.fromNullable(payouts.find((p) => p.payout_id === transfer.reference)),
          (payout): Waiting => ({ split: found.value, payouts, payout })
        )
      }),
    waiting: ({ payout }) => payout.status === "PENDING",
    settle: (waiting, outcome, _, now) =>
      Effect.map(
        Effect.orDie(
          Split.transition(
            Split.payoutStateMachine,
            waiting.payout.status,
            outcome._tag === "Completed" ? "SUCCESS" : "FAILED"
          )
        ),
        (status) => ({
          ...waiting,
          payout: new Split.SplitPayout({
            ...waiting.payout,
            status,
            bank_transaction_id: outcome._tag === "Completed" ? outcome.bank_transaction_id : null,
            failure_reason: outcome._tag === "Failed" ? outcome.reason : null,
            executed_timestamp: now
          })
        })
      ),
    update: ({ payout }) => repo.updatePayout(payout),
    emit: ({ payout, payouts, split }, _, now) =>
      finishIfDone(
        repo,
        outbox,
        split,
        payouts.map((p) => (p.payout_id === payout.payout_id ? payout : p)),
        now
      ).pipe(Effect.orDie, Effect.map(Option.isSome))
  })

/** The split payouts' settlement, for the engine's `Settlements` registry. */
export const splitPayoutSettlement = Effect.gen(function* () {
  return makeSplitPayoutSettlement(yield* SplitRepository, yield* Outbox)
})
