/**
 * A payment in its encoded form (`Payment.Encoded`: what the API answers, and the stored
 * document's version 1 while the two are equal), written by hand. The schema's encoder is the
 * reference; this one does the same conversions (`Money` to amounts as text or numbers,
 * `DateTime` to ISO text, `BigDecimal` rates to numbers, null optional fields left out) without
 * its checks, on a value the domain built and validated, several times faster than the schema's
 * encoder. The keys come in the schema's order, so the JSON
 * text is the same. Checked against the schema by `@cobro/sql`'s `paymentCodec.test.ts` and
 * `@cobro/http`'s `paymentDetailWire.test.ts`.
 */
import { BigDecimal, DateTime } from "effect"
import type { SenderProblem } from "../bank/BankAccount.js"
import * as Money from "../Money.js"
import type * as P from "./Payment.js"

type Encoded = typeof P.Payment.Encoded
type EncodedTransaction = Encoded["transactions"][number]
type EncodedTax = EncodedTransaction["taxes"][number]
type EncodedFields = NonNullable<Encoded["transaction_fields"]>
type EncodedMotive = Encoded["metadata"]["motive"][number]
type EncodedClient = NonNullable<Encoded["client_data"]>

const iso = (at: DateTime.Utc): string => DateTime.formatIso(at)

const encodeTax = (t: P.Tax): EncodedTax => ({
  tax_amount: Money.toNumber(t.tax_amount),
  tax_rate: BigDecimal.unsafeToNumber(t.tax_rate),
  tax_type: t.tax_type
})

const encodeTransaction = (t: P.Transaction): EncodedTransaction => {
  const d = t.transaction_data.PROCESSED
  return {
    address: t.address,
    amount: Money.format(t.amount),
    commission: BigDecimal.unsafeToNumber(t.commission),
    commission_amount: Money.format(t.commission_amount),
    commission_taxes: t.commission_taxes.map(encodeTax),
    commission_tax_amount: Money.format(t.commission_tax_amount),
    creation_timestamp: iso(t.creation_timestamp),
    credited_amount: Money.format(t.credited_amount),
    currency: t.currency,
    network: t.network,
    sender_address: t.sender_address,
    taxes: t.taxes.map(encodeTax),
    tax_amount: Money.format(t.tax_amount),
    transaction_status: t.transaction_status,
    transaction_data: {
      PROCESSED: {
        amount: Money.toNumber(d.amount),
        currency: d.currency,
        recipient: d.recipient,
        recipientCuit: d.recipientCuit,
        recipientTitular: d.recipientTitular,
        sender: d.sender,
        senderCuit: d.senderCuit,
        senderTitular: d.senderTitular,
        trxId: d.trxId
      }
    },
    ...(t.sender_problems === null
      ? {}
      : {
          sender_problems: t.sender_problems.map((p: SenderProblem) => ({ field: p.field, reason: p.reason }))
        })
  }
}

const encodeFields = (f: P.TransactionFields): EncodedFields => ({
  amount: Money.format(f.amount),
  amountReadable: f.amountReadable,
  commission_amount: Money.format(f.commission_amount),
  credited_amount: Money.format(f.credited_amount),
  currency: f.currency,
  network: f.network,
  total_paid: { amount: Money.format(f.total_paid.amount), currency: f.total_paid.currency }
})

const encodeMotive = (m: P.MotiveChange): EncodedMotive => ({
  value: m.value,
  ...(m.previous === null ? {} : { previous: m.previous }),
  modified_by: m.modified_by,
  modification_timestamp: iso(m.modification_timestamp)
})

const clientKeys = ["first_name", "last_name", "phone", "email", "dni", "cuit"] as const

/** The fields of client data that have a value (null ones are left out). */
export const presentOf = (data: EncodedClient | P.ClientData) => {
  const out: { -readonly [K in (typeof clientKeys)[number]]?: string } = {}
  for (const key of clientKeys) if (data[key] !== undefined) out[key] = data[key]
  return out
}

/** `p` encoded; null optional fields are left out. */
export const encode = (p: P.Payment): Encoded => ({
  id: p.id,
  payment_status: p.payment_status,
  price: { amount: Money.toNumber(p.price), currency: p.price.currency },
  payment_options: [...p.payment_options],
  external_id: p.external_id,
  ...(p.webhook_url === null ? {} : { webhook_url: p.webhook_url }),
  ...(p.redirect_url === null ? {} : { redirect_url: p.redirect_url }),
  ...(p.motive === null ? {} : { motive: p.motive }),
  payment_url: p.payment_url,
  expiration_timestamp: iso(p.expiration_timestamp),
  creation_timestamp: iso(p.creation_timestamp),
  last_modified_timestamp: iso(p.last_modified_timestamp),
  is_deleted: p.is_deleted,
  user_id: p.user_id,
  quotes: p.quotes.map((q) => ({
    currency: q.currency,
    network: q.network,
    amount: Money.format(q.amount),
    amountReadable: q.amountReadable,
    address: q.address,
    alias: q.alias
  })),
  transactions: p.transactions.map(encodeTransaction),
  ...(p.transaction_fields === undefined ? {} : { transaction_fields: encodeFields(p.transaction_fields) }),
  metadata: { motive: p.metadata.motive.map(encodeMotive) },
  ...(p.client_data === null ? {} : { client_data: presentOf(p.client_data) }),
  ...(p.team_id === null ? {} : { team_id: p.team_id }),
  tags: [...p.tags],
  ...(p.partner_id === null ? {} : { partner_id: p.partner_id }),
  cvu_released: p.cvu_released,
  creation_request: p.creation_request
})
