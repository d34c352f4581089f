/** What an operator reads of a merchant's money: its balance and its payouts, a page at a time. */
import { Balances, Errors, MerchantMoney, Page, Spans } from "@cobro/core"
import { UserRepository } from "@cobro/core/ports"
import { Effect, Option, ParseResult, Schema } from "effect"
import { userIdFrom } from "./input.js"

/** The merchant `userId`, which must exist (a balance of nobody would read as zeros). */
const existing = (userId: string) =>
  Effect.gen(function* () {
    const id = yield* userIdFrom(userId)
    if (Option.isNone(yield* (yield* UserRepository.UserRepository).findById(id))) {
      return yield* Errors.NotFound.of("user", id)
    }
    return id
  })

/** A merchant's balance by currency (the same read as GET /users/{user_id}/balance). */
export const userBalance = Spans.fn("Admin.userBalance")(function* (userId: string) {
  const id = yield* existing(userId)
  return yield* (yield* Balances.Balances).balance(id, id)
})

export interface ListPayoutsInput {
  readonly user_id: string
  readonly kind?: string | undefined
  /** The previous page's `next_cursor`. */
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

const invalid = (field: string) => (error: ParseResult.ParseError) =>
  Errors.InvalidInput.of(field, ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "is invalid")

/** One page of a merchant's payouts, newest first, and the cursor of the next (the same read as the route). */
export const listPayouts = Spans.fn("Admin.listPayouts")(function* (input: ListPayoutsInput) {
  const id = yield* existing(input.user_id)
  const kind =
    input.kind === undefined
      ? undefined
      : yield* Schema.decodeUnknown(MerchantMoney.PayoutKind)(input.kind.toLowerCase()).pipe(
          Effect.mapError(() =>
            Errors.InvalidInput.of(
              "kind",
              `must be one of ${MerchantMoney.PayoutKind.literals.join(", ")}, got "${input.kind}"`
            )
          )
        )
  const before =
    input.cursor === undefined
      ? undefined
      : yield* Schema.decodeUnknown(Page.CursorText)(input.cursor).pipe(Effect.mapError(invalid("cursor")))
  const limit = input.limit ?? Page.defaultLimit
  if (!Number.isInteger(limit) || limit < 1 || limit > Page.maxLimit) {
    return yield* Errors.InvalidInput.of(
      "limit",
      `must be an integer from 1 to ${Page.maxLimit}, got ${limit}`
    )
  }
  const page = yield* (yield* Balances.Balances).payouts(id, id, { kind, before, limit })
  return {
    payouts: page.items,
    next_cursor: Option.getOrUndefined(Option.map(page.next, Schema.encodeSync(Page.CursorText)))
  }
})
