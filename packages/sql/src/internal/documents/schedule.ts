/**
 * How payout schedules and their payouts are stored in their `doc` columns: version 1, frozen
 * (see `versioned.ts`).
 */
import { Schedule as S } from "@cobro/core"
import { Schema } from "effect"
import { v1 } from "./versioned.js"

const { Literal, NullOr, Number, String, Struct } = Schema
const frequency = Literal("bi_daily", "daily", "weekly", "monthly")

/** A stored payout schedule, version 1. */
export const PayoutSchedule = v1(
  {
    schedule_id: String,
    schedule_type: Literal("payout"),
    frequency,
    schedule_status: Literal("active", "inactive"),
    next_run_date: String,
    creation_timestamp: String,
    user_id: String,
    payload: Struct({ address: String }),
    partner_id: String,
    last_modified_timestamp: String
  },
  S.PayoutSchedule
)

/** A payout without its amount (which lives in its columns: a JSON number cannot carry every bigint). */
export const PayoutWithoutAmount = Schema.Struct(S.Payout.fields).pipe(Schema.omit("amount"))

/** A stored payout, version 1 (without its amount). */
export const Payout = v1(
  {
    payout_id: String,
    schedule_id: String,
    user_id: String,
    address: String,
    payout_status: Literal("PENDING", "SUCCESS", "FAILED"),
    bank_transaction_id: NullOr(String),
    error: NullOr(String),
    attempts: Number,
    attempted_at: String,
    creation_timestamp: String,
    last_modified_timestamp: String
  },
  PayoutWithoutAmount
)
