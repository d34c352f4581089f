/**
 * Helpers shared by the split payments service and its parts (payout accounts, execution).
 */
import { Effect, Option } from "effect"
import { NotPermitted, NotFound, ProviderFailure } from "../Errors.js"
import type { PartnerId, PayoutAccountId, UserId } from "../Ids.js"
import { type EventType, makeEvent, type Outbox } from "../webhooks/Outbox.js"
import type { Principal } from "../Principal.js"
import type { SplitPayment } from "./Split.js"
import type { SplitRepository } from "./SplitRepository.js"
import type { User } from "../accounts/User.js"
import type { UserRepository } from "../accounts/UserRepository.js"

export const partnerOf = (principal: Principal): PartnerId | null =>
  principal._tag === "Partner" ? principal.partner_id : null

export const bankFailure = (what: string) => (e: { readonly message: string }) =>
  new ProviderFailure({ key: "bank.unavailable", message: `${what}: ${e.message}` })

/** The owner's account, which must be ACTIVE to open splits, whitelist accounts or instruct. */
export const activeUser = (
  users: UserRepository["Type"],
  owner: UserId
): Effect.Effect<User, NotFound | NotPermitted> =>
  Effect.flatMap(users.findById(owner), (found): Effect.Effect<User, NotFound | NotPermitted> =>
    Option.isNone(found)
      ? Effect.fail(NotFound.of("user", owner))
      : found.value.account_status === "ACTIVE"
        ? Effect.succeed(found.value)
        : Effect.fail(
            new NotPermitted({
              key: "account.not.active",
              message: `the account is ${found.value.account_status}`
            })
          )
  )

/** The owner's payout account; another account's is not found. */
export const ownedAccount = (
  repo: SplitRepository["Type"],
  owner: UserId,
  id: PayoutAccountId,
  lock = false
) =>
  Effect.flatMap(lock ? repo.findAccountForUpdate(id) : repo.findAccount(id), (found) =>
    Option.isSome(found) && found.value.user_id === owner
      ? Effect.succeed(found.value)
      : Effect.fail(NotFound.of("payout_account", id))
  )

/** A split event, signed for and sent to the split's owner and webhook URL (not yet made). */
export const splitEventInput = (split: SplitPayment, type: EventType, payload: Record<string, unknown>) => ({
  type,
  user_id: split.user_id,
  webhook_url: split.webhook_url,
  payload
})

/** Appends a split event (`splitEventInput`). */
export const emitSplitEvent = (
  outbox: Outbox["Type"],
  split: SplitPayment,
  type: EventType,
  payload: Record<string, unknown>
) => Effect.flatMap(makeEvent(splitEventInput(split, type, payload)), outbox.append)
