/**
 * The stored payment's version 1 read and written by hand: the trusted path of `Payment` in
 * `payment.ts`. A row of `cobro_payments` was written by the schema's validated encode, so its
 * reads need not validate it again, and the schema's parser is most of a read's CPU: decoding a
 * paid payment took about 50 µs, encoding it about 30 (bench/results.md). This codec does the
 * same conversions (amounts as text or numbers to `Money`, ISO text to `DateTime`, rates to
 * `BigDecimal`, absent or null optional fields) without the checks, and builds the domain
 * classes without their constructors' validation.
 *
 * The frozen shape of version 1 (`payment.ts`) is the contract: `paymentCodec.test.ts` checks
 * that this codec and the schema's answer the same for payments of every kind of content.
 */
import { Money, Payment as P } from "@cobro/core"
import { BigDecimal } from "effect"
import { arsNumber, arsText, iso, numberOf, time, trusted } from "./trusted.js"

type Frozen = typeof P.Payment.Encoded
type FrozenTransaction = Frozen["transactions"][number]
type FrozenTax = FrozenTransaction["taxes"][number]
type FrozenFields = NonNullable<Frozen["transaction_fields"]>
type FrozenMotive = Frozen["metadata"]["motive"][number]
type FrozenClient = NonNullable<Frozen["client_data"]>

const decodeTax = (t: FrozenTax) =>
  new P.Tax(
    {
      tax_amount: arsNumber(t.tax_amount),
      tax_rate: BigDecimal.unsafeFromNumber(t.tax_rate),
      tax_type: t.tax_type
    },
    trusted
  )

const encodeTax = (t: P.Tax): FrozenTax => ({
  tax_amount: Money.toNumber(t.tax_amount),
  tax_rate: BigDecimal.unsafeToNumber(t.tax_rate),
  tax_type: t.tax_type
})

const decodeTransaction = (t: FrozenTransaction) => {
  const d = t.transaction_data.PROCESSED
  return new P.Transaction(
    {
      address: t.address as P.Transaction["address"],
      amount: arsText(t.amount),
      commission: BigDecimal.unsafeFromNumber(t.commission),
      commission_amount: arsText(t.commission_amount),
      commission_taxes: t.commission_taxes.map(decodeTax),
      commission_tax_amount: arsText(t.commission_tax_amount),
      creation_timestamp: time(t.creation_timestamp),
      credited_amount: arsText(t.credited_amount),
      currency: t.currency,
      network: t.network,
      sender_address: t.sender_address,
      taxes: t.taxes.map(decodeTax),
      tax_amount: arsText(t.tax_amount),
      transaction_status: t.transaction_status,
      transaction_data: {
        PROCESSED: new P.TransferDetails({ ...d, amount: arsNumber(d.amount) }, trusted)
      }
    },
    trusted
  )
}

const encodeTransaction = (t: P.Transaction): FrozenTransaction => {
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
    }
  }
}

const decodeFields = (f: FrozenFields) =>
  new P.TransactionFields(
    {
      amount: arsText(f.amount),
      amountReadable: f.amountReadable,
      commission_amount: arsText(f.commission_amount),
      credited_amount: arsText(f.credited_amount),
      currency: f.currency,
      network: f.network,
      total_paid: new P.TotalPaid(
        { amount: arsText(f.total_paid.amount), currency: f.total_paid.currency },
        trusted
      )
    },
    trusted
  )

const encodeFields = (f: P.TransactionFields): FrozenFields => ({
  amount: Money.format(f.amount),
  amountReadable: f.amountReadable,
  commission_amount: Money.format(f.commission_amount),
  credited_amount: Money.format(f.credited_amount),
  currency: f.currency,
  network: f.network,
  total_paid: { amount: Money.format(f.total_paid.amount), currency: f.total_paid.currency }
})

const decodeMotive = (m: FrozenMotive) =>
  new P.MotiveChange(
    {
      value: m.value,
      previous: m.previous ?? null,
      modified_by: m.modified_by as P.MotiveChange["modified_by"],
      modification_timestamp: time(m.modification_timestamp)
    },
    trusted
  )

const encodeMotive = (m: P.MotiveChange): FrozenMotive => ({
  value: m.value,
  ...(m.previous === null ? {} : { previous: m.previous }),
  modified_by: m.modified_by,
  modification_timestamp: iso(m.modification_timestamp)
})

/** The keys of a client's data that are present (an absent one stays absent). */
const clientKeys = ["first_name", "last_name", "phone", "email", "dni", "cuit"] as const

const presentOf = (data: FrozenClient | P.ClientData) => {
  const out: { -readonly [K in (typeof clientKeys)[number]]?: string } = {}
  for (const key of clientKeys) if (data[key] !== undefined) out[key] = data[key]
  return out
}

/** A stored version-1 payment (without `v`) as the domain's `Payment`. */
export const decode = (d: Frozen): P.Payment => {
  const price = numberOf(d.price.amount, d.price.currency)
  return new P.Payment(
    {
      id: d.id as P.Payment["id"],
      payment_status: d.payment_status,
      price,
      payment_options: [...d.payment_options],
      external_id: d.external_id as P.Payment["external_id"],
      webhook_url: d.webhook_url ?? null,
      redirect_url: d.redirect_url ?? null,
      motive: d.motive ?? null,
      payment_url: d.payment_url,
      expiration_timestamp: time(d.expiration_timestamp),
      creation_timestamp: time(d.creation_timestamp),
      last_modified_timestamp: time(d.last_modified_timestamp),
      is_deleted: d.is_deleted,
      user_id: d.user_id as P.Payment["user_id"],
      quotes: d.quotes.map(
        (q) =>
          new P.Quote(
            {
              currency: q.currency,
              network: q.network,
              amount: arsText(q.amount),
              amountReadable: q.amountReadable,
              address: q.address as P.Quote["address"],
              alias: q.alias as P.Quote["alias"]
            },
            trusted
          )
      ),
      transactions: d.transactions.map(decodeTransaction),
      ...(d.transaction_fields === undefined
        ? {}
        : { transaction_fields: decodeFields(d.transaction_fields) }),
      metadata: new P.PaymentMetadata({ motive: d.metadata.motive.map(decodeMotive) }, trusted),
      client_data:
        d.client_data === undefined || d.client_data === null
          ? null
          : new P.ClientData(presentOf(d.client_data), trusted),
      team_id: (d.team_id ?? null) as P.Payment["team_id"],
      tags: [...d.tags],
      partner_id: (d.partner_id ?? null) as P.Payment["partner_id"],
      cvu_released: d.cvu_released,
      creation_request: d.creation_request
    },
    trusted
  )
}

/** `p` in the stored shape of version 1 (without `v`); null optional fields are left out. */
export const encode = (p: P.Payment): Frozen => ({
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
