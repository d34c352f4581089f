/**
 * How users and partners are stored in their `doc` columns: version 1, frozen (see
 * `versioned.ts`). Users are read and written by
 * the domain's codec without its checks (`trusted`).
 */
import { Partner as P, User as U } from "@cobro/core"
import { Schema } from "effect"
import { v1 } from "./versioned.js"

const { Boolean, Literal, NullOr, Number, String, Struct } = Schema

/** A stored user, version 1. */
export const User = v1(
  {
    user_id: String,
    name: String,
    email: String,
    cuit: String,
    account_status: Literal("ACTIVE", "PENDING", "REJECTED", "SUSPENDED"),
    alias_prefix: NullOr(String),
    cancellation_period: NullOr(Number),
    cancellation_period_minutes: NullOr(Number),
    automatic_cancellation: Boolean,
    transfer_tolerance: Number,
    payout_schedule: NullOr(
      Struct({ address: String, frequency: Literal("bi_daily", "daily", "weekly", "monthly") })
    ),
    partner_id: NullOr(String),
    creation_timestamp: String,
    last_modified_timestamp: String
  },
  U.User,
  "trusted"
)

/** A stored partner, version 1. */
export const Partner = v1(
  {
    partner_id: String,
    name: String,
    slug: String,
    commission: Number,
    redirect_url: String,
    webhook_url: NullOr(String),
    client_id: String,
    client_secret_sealed: String,
    creation_timestamp: String,
    secret_rotated_at: String
  },
  P.Partner
)
