/**
 * How a schedule payout hears the outcome of its transfer (`OutgoingTransfers`' settle step,
 * inside its unit of work, after the money moved): SUCCESS with the bank's id, or FAILED with
 * the bank's reason, its money back in the merchant's available balance, and a "payout.failed"
 * event to the partner that created the schedule (docs/webhooks.md).
 */
import { Effect, Option } from "effect"
import { PayoutId } from "../Ids.js"
import * as Money from "../Money.js"
import { ownerSettlement } from "../outgoing/Settlement.js"
import { PartnerRepository } from "../auth/PartnerRepository.js"
import { makeEvent, Outbox } from "../webhooks/Outbox.js"
import * as S from "./Schedule.js"
import { ScheduleRepository } from "./ScheduleRepository.js"

/** The `message` of the "payout.failed" event. */
export const payoutFailedMessage = "payout.failed"

/** The schedule payouts' settlement, for the engine's `Settlements` registry. */
export const schedulePayoutSettlement = Effect.gen(function* () {
  const repo = yield* ScheduleRepository
  const partners = yield* PartnerRepository
  const outbox = yield* Outbox

  /** The failure event, to the schedule's partner (signed with its secret), if it has a URL. */
  const emitFailed = (payout: S.Payout, reason: string) =>
    Effect.gen(function* () {
      const schedule = yield* repo.findById(payout.schedule_id)
      const partnerId = Option.map(schedule, (s) => s.partner_id)
      const partner = yield* Option.match(partnerId, {
        onNone: () => Effect.succeed(Option.none()),
        onSome: (id) => partners.findById(id)
      })
      yield* outbox.append(
        yield* makeEvent({
          type: "payout.failed",
          user_id: payout.user_id,
          partner_id: Option.getOrNull(partnerId),
          webhook_url: Option.match(partner, { onNone: () => null, onSome: (p) => p.webhook_url }),
          payload: {
            message: payoutFailedMessage,
            payout_id: payout.payout_id,
            schedule_id: payout.schedule_id,
            user_id: payout.user_id,
            amount: Money.format(payout.amount),
            reason
          }
        })
      )
    })

  return ownerSettlement<S.Payout>({
    purpose: "schedule_payout",
    completedKind: "payout.sent",
    failedKind: "payout.failed",
    name: "payout",
    lock: (transfer) => repo.findPayoutByIdForUpdate(PayoutId.make(transfer.owner_id)),
    waiting: (payout) => payout.payout_status === "PENDING",
    settle: (payout, outcome, transfer, now) => {
      const completed = outcome._tag === "Completed"
      const status = completed ? "SUCCESS" : "FAILED"
      return Effect.as(
        Effect.orDie(S.guardPayout(payout, status)),
        new S.Payout({
          ...payout,
          payout_status: status,
          bank_transaction_id: outcome.bank_transaction_id ?? payout.bank_transaction_id,
          error: completed ? payout.error : outcome.reason,
          attempts: transfer.sends,
          last_modified_timestamp: now
        })
      )
    },
    update: (payout) => repo.updatePayout(payout),
    emit: (payout, outcome) =>
      Effect.as(outcome._tag === "Failed" ? emitFailed(payout, outcome.reason) : Effect.void, true)
  })
})
