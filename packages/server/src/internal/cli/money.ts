/** `cobro users balance` and `cobro payouts list`: a merchant's money, as the API shows it. */
import { Args, Command, Options } from "@effect/cli"
import { MerchantMoney } from "@cobro/core"
import { Console, DateTime, Effect, Schema } from "effect"
import * as Admin from "../../Admin.js"
import { json, optionalText, orUndefined, printJson, table, withServices } from "./shared.js"

const encodeBalance = Schema.encodeSync(MerchantMoney.MerchantBalance)
const encodePayout = Schema.encodeSync(MerchantMoney.MerchantPayout)

export const usersBalance = Command.make(
  "balance",
  { userId: Args.text({ name: "user_id" }).pipe(Args.withDescription("the merchant")), json },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const balance = yield* Admin.userBalance(o.userId)
        if (o.json) return yield* printJson(encodeBalance(balance))
        yield* Console.log(
          table(
            ["CURRENCY", "AVAILABLE", "IN_TRANSIT"],
            balance.balances.map((b) => [b.currency, b.available, b.in_transit]),
            "no balance"
          )
        )
      })
    )
).pipe(Command.withDescription("a merchant's balance: available and in transit, by currency"))

const payoutsList = Command.make(
  "list",
  {
    userId: Options.text("user-id").pipe(Options.withDescription("the merchant")),
    kind: optionalText("kind", "only payouts of this kind: schedule, split or refund"),
    cursor: optionalText("cursor", "the next_cursor of the previous page"),
    limit: Options.integer("limit").pipe(Options.withDescription("1-100, default 50"), Options.optional),
    json
  },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const page = yield* Admin.listPayouts({
          user_id: o.userId,
          kind: orUndefined(o.kind),
          cursor: orUndefined(o.cursor),
          limit: orUndefined(o.limit)
        })
        if (o.json) {
          return yield* printJson({
            payouts: page.payouts.map((p) => encodePayout(p)),
            ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor })
          })
        }
        yield* Console.log(
          table(
            ["PAYOUT_ID", "KIND", "STATUS", "AMOUNT", "DESTINATION", "BANK_REFERENCE", "CREATED"],
            page.payouts.map((p) => [
              p.payout_id,
              p.kind,
              p.status,
              `${p.amount} ${p.currency}`,
              p.destination,
              p.bank_reference ?? "-",
              DateTime.formatIso(p.creation_timestamp)
            ]),
            "no payouts"
          ) + (page.next_cursor === undefined ? "" : `\nmore: --cursor ${page.next_cursor}`)
        )
      })
    )
).pipe(
  Command.withDescription("a merchant's payouts (schedule sweeps, split payouts, refunds), newest first")
)

export const payouts = Command.make("payouts").pipe(
  Command.withDescription("what sent merchants' money out"),
  Command.withSubcommands([payoutsList])
)
