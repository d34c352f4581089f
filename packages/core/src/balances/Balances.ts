/**
 * The merchant's money, readable: its balance by currency (from the ledger: the accounts
 * `merchantAvailable` and `merchantInTransit`) and one list of the payouts that sent it out,
 * merged from every payout source and paged by keyset, newest first.
 */
import { Effect, Option } from "effect"
import { NotFound } from "../Errors.js"
import type { UserId } from "../Ids.js"
import { Ledger } from "../ledger/Ledger.js"
import * as LedgerAccount from "../ledger/LedgerAccount.js"
import * as Money from "../Money.js"
import * as Page from "../Page.js"
import { CurrencyBalance, MerchantBalance, type MerchantPayout, type PayoutKind } from "./MerchantMoney.js"
import { sources } from "./payoutSources.js"
import * as Spans from "../Spans.js"

export interface PayoutQuery {
  /** Only payouts of this kind; every kind when absent. */
  readonly kind?: PayoutKind | undefined
  /** The previous page's `next`. */
  readonly before?: Page.Cursor | undefined
  readonly limit?: number | undefined
}

const positionOf = (p: MerchantPayout): Page.Cursor => ({
  creation_timestamp: p.creation_timestamp,
  id: p.payout_id
})

export class Balances extends Effect.Service<Balances>()("@cobro/core/Balances", {
  effect: Effect.gen(function* () {
    const ledger = yield* Ledger
    const payoutSources = yield* sources

    /** The caller reads only its own user (a partner token acts for the one user it was issued for). */
    const own = (owner: UserId, user_id: UserId) =>
      user_id === owner ? Effect.void : Effect.fail(NotFound.of("user", user_id))

    /** ARS always (a new merchant sees zeros), any other currency once it holds money. */
    const balance = Spans.fn("Balances.balance")(function* (owner: UserId, user_id: UserId) {
      yield* own(owner, user_id)
      const balances: Array<CurrencyBalance> = []
      for (const currency of Money.Currency.literals) {
        const available = yield* ledger.balance(LedgerAccount.merchantAvailable(user_id), currency)
        const inTransit = yield* ledger.balance(LedgerAccount.merchantInTransit(user_id), currency)
        if (currency === "ARS" || !Money.isZero(available) || !Money.isZero(inTransit)) {
          balances.push(CurrencyBalance.of(available, inTransit))
        }
      }
      return new MerchantBalance({ user_id, balances })
    })

    /**
     * One page of the user's payouts, newest first. Each source is asked for one more than the
     * page holds, after the same cursor; the merge of those is exact for the page and says
     * whether another follows.
     */
    const payouts = Spans.fn("Balances.payouts")(function* (
      owner: UserId,
      user_id: UserId,
      query: PayoutQuery = {}
    ) {
      yield* own(owner, user_id)
      const limit = yield* Page.checkLimit(query.limit)
      const before = Option.fromNullable(query.before)
      const chosen = payoutSources.filter((s) => query.kind === undefined || s.kind === query.kind)
      const pages = yield* Effect.forEach(chosen, (s) => s.page(user_id, before, limit + 1))
      const merged = pages.flat().sort((a, b) => Page.newestFirst(positionOf(a), positionOf(b)))
      return Page.fromRows(merged, limit, positionOf)
    })

    return { balance, payouts } as const
  })
}) {}
