/**
 * The columns of each export: what a row says of a payment, a customer's transaction, a payout
 * and a refund. Amounts are decimal text with a dot (`Money.format`), dates ISO 8601 in UTC, and
 * text from outside cobro is marked `text` (neutralized, see `encode.ts`).
 */
import { type Customer, type MerchantMoney, Money, type Payment, type Refund } from "@cobro/core"
import { DateTime } from "effect"
import type { Column } from "./encode.js"

const iso = (at: DateTime.Utc): string => DateTime.formatIso(at)
const isoOrEmpty = (at: DateTime.Utc | null | undefined): string | undefined =>
  at === null || at === undefined ? undefined : iso(at)
const orEmpty = (value: string | null | undefined): string | undefined => value ?? undefined

/** Distinct values of several transfers, in order, joined with "; ". */
const distinct = (values: ReadonlyArray<string>): string | undefined =>
  values.length === 0 ? undefined : [...new Set(values)].join("; ")

const sumOf = (amounts: ReadonlyArray<Money.Money>): string =>
  Money.format(Money.orThrow(Money.sum("ARS", amounts)))

export const payment: ReadonlyArray<Column<Payment.Payment>> = [
  { name: "payment_id", value: (p) => p.id },
  { name: "external_id", value: (p) => p.external_id, text: true },
  { name: "payment_status", value: (p) => p.payment_status },
  { name: "price_amount", value: (p) => Money.format(p.price) },
  { name: "price_currency", value: (p) => p.price.currency },
  { name: "quote_amount_ars", value: (p) => Money.format(p.quoteAmount) },
  { name: "received_amount_ars", value: (p) => sumOf(p.transactions.map((t) => t.amount)) },
  { name: "credited_amount_ars", value: (p) => sumOf(p.transactions.map((t) => t.credited_amount)) },
  { name: "transfers", value: (p) => String(p.transactions.length) },
  { name: "cvu", value: (p) => p.cvu },
  { name: "alias", value: (p) => p.quotes[0]!.alias },
  {
    name: "payer_cuits",
    value: (p) => distinct(p.transactions.map((t) => t.transaction_data.PROCESSED.senderCuit)),
    text: true
  },
  {
    name: "payer_names",
    value: (p) => distinct(p.transactions.map((t) => t.transaction_data.PROCESSED.senderTitular)),
    text: true
  },
  { name: "motive", value: (p) => orEmpty(p.motive), text: true },
  { name: "team_id", value: (p) => orEmpty(p.team_id), text: true },
  { name: "creation_timestamp", value: (p) => iso(p.creation_timestamp) },
  { name: "expiration_timestamp", value: (p) => iso(p.expiration_timestamp) },
  { name: "last_modified_timestamp", value: (p) => iso(p.last_modified_timestamp) }
]

export const customerTransaction: ReadonlyArray<Column<Customer.CustomerTransaction>> = [
  { name: "transaction_id", value: (t) => t.transaction_id },
  { name: "customer_id", value: (t) => t.customer_id },
  { name: "amount", value: (t) => Money.format(t.amount) },
  { name: "commission_amount", value: (t) => Money.format(t.commission_amount) },
  { name: "commission_tax_amount", value: (t) => Money.format(t.commission_tax_amount) },
  { name: "tax_amount", value: (t) => Money.format(t.tax_amount) },
  { name: "credited_amount", value: (t) => Money.format(t.credited_amount) },
  { name: "currency", value: (t) => t.currency },
  { name: "cvu", value: (t) => t.address },
  { name: "sender_address", value: (t) => t.sender_address, text: true },
  { name: "sender_cuit", value: (t) => t.sender_cuit, text: true },
  { name: "sender_name", value: (t) => t.sender_name, text: true },
  { name: "bank_transaction_id", value: (t) => t.bank_transaction_id, text: true },
  { name: "transaction_status", value: (t) => t.transaction_status },
  { name: "creation_timestamp", value: (t) => iso(t.creation_timestamp) }
]

export const payout: ReadonlyArray<Column<MerchantMoney.MerchantPayout>> = [
  { name: "payout_id", value: (p) => p.payout_id },
  { name: "kind", value: (p) => p.kind },
  { name: "amount", value: (p) => p.amount },
  { name: "currency", value: (p) => p.currency },
  { name: "destination", value: (p) => p.destination, text: true },
  { name: "status", value: (p) => p.status },
  { name: "bank_reference", value: (p) => orEmpty(p.bank_reference), text: true },
  { name: "failure_reason", value: (p) => orEmpty(p.failure_reason), text: true },
  { name: "schedule_id", value: (p) => orEmpty(p.schedule_id) },
  { name: "split_payment_id", value: (p) => orEmpty(p.split_payment_id) },
  { name: "payment_id", value: (p) => orEmpty(p.payment_id) },
  { name: "creation_timestamp", value: (p) => iso(p.creation_timestamp) },
  { name: "executed_timestamp", value: (p) => isoOrEmpty(p.executed_timestamp) }
]

export const refund: ReadonlyArray<Column<Refund.Refund>> = [
  { name: "refund_id", value: (r) => r.refund_id },
  { name: "payment_id", value: (r) => r.payment_id },
  { name: "refund_type", value: (r) => r.refund_type },
  { name: "amount", value: (r) => Money.format(r.amount) },
  { name: "currency", value: (r) => r.amount.currency },
  { name: "status", value: (r) => r.status },
  { name: "destination_address", value: (r) => r.destination.address, text: true },
  { name: "destination_cuit", value: (r) => r.destination.cuit, text: true },
  { name: "destination_name", value: (r) => r.destination.name, text: true },
  { name: "bank_reference", value: (r) => orEmpty(r.bank_transaction_id), text: true },
  { name: "failure_reason", value: (r) => orEmpty(r.failure_reason), text: true },
  { name: "requested_by_team", value: (r) => r.blame?.team_id, text: true },
  { name: "requested_by_mail", value: (r) => r.blame?.mail, text: true },
  { name: "creation_timestamp", value: (r) => iso(r.creation_timestamp) },
  { name: "last_modified_timestamp", value: (r) => iso(r.last_modified_timestamp) }
]
