/**
 * The `money` routes: a merchant's balance and the payouts that sent its money out, with the
 * merchant's token or a partner token for it.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, MerchantMoney } from "@cobro/core"
import { Schema } from "effect"
import { Envelope } from "../../Envelope.js"
import { Authentication } from "../../Security.js"
import { EnvelopeErrors, PageOf, PageParams } from "./shared.js"

export const ListPayoutsParams = Schema.Struct({
  /** The token's own user; optional (the token names it). */
  user_id: Schema.optional(Ids.UserId),
  kind: Schema.optional(MerchantMoney.PayoutKind),
  ...PageParams
})

export class Money extends HttpApiGroup.make("money")
  .add(
    HttpApiEndpoint.get("balance", "/users/:user_id/balance")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a merchant's balance",
          description:
            "What the merchant can be paid out now (`available`) and what is on its way to its bank in payouts not yet confirmed (`in_transit`), per currency, as decimal text. ARS is always present. Fixed customers' balances and split payments' funds are not part of it. With the merchant's token or a partner token for it; another user is 404."
        })
      )
      .setPath(Schema.Struct({ user_id: Ids.UserId }))
      .addSuccess(Envelope(MerchantMoney.MerchantBalance))
  )
  .add(
    HttpApiEndpoint.get("payouts", "/transactions/payouts")
      .annotateContext(
        OpenApi.annotations({
          summary: "List a merchant's payouts",
          description:
            "Every payout that sends the merchant's money out, newest first: `kind` `schedule` (a payout schedule's sweep) and `split` (a split payment's payout); `refund` is reserved for refunds. Each with amount, destination, status (PENDING, SUCCESS, FAILED), the bank's reference once sent, and timestamps. `limit` per page (1\u2013100, default 50); when more follow, send `next_cursor` back as `cursor`."
        })
      )
      .setUrlParams(ListPayoutsParams)
      .addSuccess(Envelope(PageOf("payouts", MerchantMoney.MerchantPayout)))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Balances")
  .annotate(
    OpenApi.Description,
    "The merchant's money: its balance by currency and the payouts that sent it out."
  ) {}
