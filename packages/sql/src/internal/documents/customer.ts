/**
 * How a customer and its transactions are stored in `cobro_customers.doc` and
 * `cobro_customer_transactions.doc`: version 1, frozen (see `versioned.ts`).
 */
import { Customer as C } from "@cobro/core"
import { Schema } from "effect"
import { senderProblems, tax, transferCharges } from "./payment.js"
import { v1 } from "./versioned.js"

const { Array, Literal, NullOr, Number, String, Struct } = Schema

/**
 * A stored customer, version 1. Its `balance` holds zero: the balance lives in its column (a JSON
 * number cannot carry every bigint), which the repository reads over it.
 */
export const Customer = v1(
  {
    customer_id: String,
    user_id: String,
    name: String,
    alias: String,
    bank_info: Struct({ cvu: String, alias: String }),
    balance: Number,
    contact: NullOr(Struct({ email: String })),
    webhook_url: NullOr(String),
    creation_timestamp: String,
    last_modified_timestamp: String
  },
  C.Customer
)

/** A stored customer transaction, version 1. */
export const CustomerTransaction = v1(
  {
    transaction_id: String,
    customer_id: String,
    user_id: String,
    ...transferCharges,
    taxes: Array(tax),
    tax_amount: String,
    credited_amount: String,
    currency: Literal("ARS"),
    network: String,
    sender_address: String,
    sender_cuit: String,
    sender_name: String,
    bank_transaction_id: String,
    transaction_status: Literal("PROCESSED"),
    creation_timestamp: String,
    sender_problems: senderProblems
  },
  C.CustomerTransaction
)
