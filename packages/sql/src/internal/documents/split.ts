/**
 * How split payments, their payouts, payout accounts and verification requests are stored in
 * their `doc` columns: version 1, frozen (see `versioned.ts`).
 */
import { Split as S } from "@cobro/core"
import { Schema } from "effect"
import { omittable, v1 } from "./versioned.js"

const { Array, Literal, NullOr, Number, String } = Schema

/** A stored split payment, version 1. */
export const SplitPayment = v1(
  {
    split_payment_id: String,
    user_id: String,
    partner_id: NullOr(String),
    external_id: String,
    webhook_url: NullOr(String),
    cvu: String,
    alias: String,
    payment_status: Literal("PENDING", "RECEIVED"),
    payout_status: NullOr(Literal("ON_HOLD", "PROCESSING", "SUCCESS", "PARTIAL_FAILURE", "FAILED")),
    hold_until: NullOr(String),
    amount_received: String,
    amount_credited: String,
    payouts_total: NullOr(String),
    lease_until: NullOr(String),
    creation_timestamp: String,
    last_modified_timestamp: String
  },
  S.SplitPayment
)

/** A stored split payout, version 1. */
export const SplitPayout = v1(
  {
    payout_id: String,
    split_payment_id: String,
    account_id: String,
    destination: String,
    amount: String,
    status: Literal("PENDING", "SUCCESS", "FAILED"),
    bank_transaction_id: NullOr(String),
    failure_reason: NullOr(String),
    position: Number,
    creation_timestamp: String,
    executed_timestamp: NullOr(String)
  },
  S.SplitPayout
)

/** A stored payout account, version 1. */
export const PayoutAccount = v1(
  {
    account_id: String,
    user_id: String,
    partner_id: omittable(NullOr(String)),
    address: String,
    bank_account: String,
    holder_name: String,
    holder_cuit: String,
    label: omittable(NullOr(String)),
    status: Literal("PENDING_VERIFICATION", "ACTIVE", "DISABLED"),
    request_id: String,
    creation_timestamp: String,
    activation_timestamp: omittable(NullOr(String)),
    disabled_timestamp: omittable(NullOr(String)),
    last_modified_timestamp: String
  },
  S.PayoutAccount
)

/** A stored verification request, version 1. */
export const VerificationRequest = v1(
  {
    request_id: String,
    user_id: String,
    account_ids: Array(String),
    status: Literal("PENDING", "VERIFIED", "LOCKED"),
    attempts: Number,
    exp_timestamp: String,
    creation_timestamp: String,
    verified_timestamp: NullOr(String)
  },
  S.VerificationRequest
)
