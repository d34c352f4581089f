/**
 * The stored payment's version 1 read and written by hand: the trusted path of `Payment` in
 * `payment.ts`. A row of `cobro_payments` was written by the schema's validated encode, so its
 * reads need not validate it again, and the schema's parser is most of a read's CPU. This codec does the
 * same conversions (amounts as text or numbers to `Money`, ISO text to `DateTime`, rates to
 * `BigDecimal`, absent or null optional fields) without the checks, and builds the domain
 * classes without their constructors' validation.
 *
 * The frozen shape of version 1 (`payment.ts`) is the contract: `paymentCodec.test.ts` checks
 * that this codec and the schema's answer the same for payments of every kind of content.
 */
import { BankAccount, Payment as P } from "@cobro/core"
import { PaymentEncoding } from "@cobro/core/ports"
import { BigDecimal } from "effect"
import { arsNumber, arsText, numberOf, time, trusted } from "./trusted.js"

type Frozen = typeof P.Payment.Encoded
type FrozenTransaction = Frozen["transactions"][number]
type FrozenTax = FrozenTransaction["taxes"][number]
type FrozenFields = NonNullable<Frozen["transaction_fields"]>
type FrozenMotive = Frozen["metadata"]["motive"][number]

const decodeTax = (t: FrozenTax) =>
  new P.Tax(
    {
      tax_amount: arsNumber(t.tax_amount),
      tax_rate: BigDecimal.unsafeFromNumber(t.tax_rate),
      tax_type: t.tax_type
    },
    trusted
  )

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
      },
      sender_problems:
        t.sender_problems === undefined || t.sender_problems === null
          ? null
          : t.sender_problems.map((p) => new BankAccount.SenderProblem(p, trusted))
    },
    trusted
  )
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

/** The keys of a client's data that are present (an absent one stays absent). */
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
          : new P.ClientData(PaymentEncoding.presentOf(d.client_data), trusted),
      team_id: (d.team_id ?? null) as P.Payment["team_id"],
      tags: [...d.tags],
      partner_id: (d.partner_id ?? null) as P.Payment["partner_id"],
      cvu_released: d.cvu_released,
      creation_request: d.creation_request
    },
    trusted
  )
}

/** `p` in the stored shape of version 1 (without `v`): its encoded form (core's `PaymentEncoding`). */
export const encode = (p: P.Payment): Frozen => PaymentEncoding.encode(p)
