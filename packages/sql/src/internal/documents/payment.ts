/**
 * How a payment is stored in `cobro_payments.doc`: version 1, frozen (see `versioned.ts`).
 */
import { Payment as P } from "@cobro/core"
import { Schema } from "effect"
import { omittable, v1 } from "./versioned.js"

const { Array, Literal, NullOr, Number, String, Struct } = Schema
const ars = Literal("ARS")
/** A key that may be left out or undefined. */
const optional = Schema.optional

/** A tax line (shared by customer transactions). */
export const tax = Struct({ tax_amount: Number, tax_rate: Number, tax_type: String })

const quote = Struct({
  currency: ars,
  network: String,
  amount: String,
  amountReadable: String,
  address: String,
  alias: String
})

const transferDetails = Struct({
  amount: Number,
  currency: ars,
  recipient: String,
  recipientCuit: String,
  recipientTitular: String,
  sender: String,
  senderCuit: String,
  senderTitular: String,
  trxId: String
})

/** What was wrong with a transfer's sender as its bank reported it (shared by customer transactions). */
export const senderProblems = omittable(
  NullOr(Array(Struct({ field: Literal("sender_address", "sender_cuit"), reason: String })))
)

/** Where a credited transfer arrived and what it was charged (shared by customer transactions). */
export const transferCharges = {
  address: String,
  amount: String,
  commission: Number,
  commission_amount: String,
  commission_taxes: Array(tax),
  commission_tax_amount: String
}

const transaction = Struct({
  ...transferCharges,
  creation_timestamp: String,
  credited_amount: String,
  currency: ars,
  network: String,
  sender_address: String,
  taxes: Array(tax),
  tax_amount: String,
  transaction_status: Literal("PROCESSED"),
  transaction_data: Struct({ PROCESSED: transferDetails }),
  sender_problems: senderProblems
})

const transactionFields = Struct({
  amount: String,
  amountReadable: String,
  commission_amount: String,
  credited_amount: String,
  currency: ars,
  network: String,
  total_paid: Struct({ amount: String, currency: ars })
})

const motiveChange = Struct({
  value: String,
  previous: omittable(NullOr(String)),
  modified_by: String,
  modification_timestamp: String
})

const clientData = Struct({
  first_name: optional(String),
  last_name: optional(String),
  phone: optional(String),
  email: optional(String),
  dni: optional(String),
  cuit: optional(String)
})

/** A stored payment, version 1. */
export const Payment = v1(
  {
    id: String,
    payment_status: Literal("PENDING", "SUCCESS", "OVERPAID", "UNDERPAID", "EXPIRED"),
    price: Struct({ amount: Number, currency: Literal("ARS", "BRL", "USDT", "BNB") }),
    payment_options: Array(Literal("transfer")),
    external_id: String,
    webhook_url: omittable(NullOr(String)),
    redirect_url: omittable(NullOr(String)),
    motive: omittable(NullOr(String)),
    payment_url: String,
    expiration_timestamp: String,
    creation_timestamp: String,
    last_modified_timestamp: String,
    is_deleted: Schema.Boolean,
    user_id: String,
    quotes: Array(quote),
    transactions: Array(transaction),
    transaction_fields: optional(transactionFields),
    metadata: Struct({ motive: Array(motiveChange) }),
    client_data: omittable(NullOr(clientData)),
    team_id: omittable(NullOr(String)),
    tags: Array(String),
    partner_id: omittable(NullOr(String)),
    cvu_released: Schema.Boolean,
    creation_request: String
  },
  P.Payment,
  "trusted"
)
