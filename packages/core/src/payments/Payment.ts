/**
 * The one-off payment: its wire shape (SPEC's Payment, Quote and Transaction tables) and its
 * state machine, as data.
 */
import { Either, Schema } from "effect"
import { Alias, Cvu, SenderProblem } from "../bank/BankAccount.js"
import { Conflict } from "../Errors.js"
import { ExternalId, PartnerId, PaymentId, TeamId, UserId } from "../Ids.js"
import * as Money from "../Money.js"
import { ArsNumber, ArsText, Omittable, Rate, Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

export const PaymentStatus = Schema.Literal("PENDING", "SUCCESS", "OVERPAID", "UNDERPAID", "EXPIRED")
export type PaymentStatus = typeof PaymentStatus.Type

/** The only method still offered. */
export const PaymentOption = Schema.Literal("transfer")
export type PaymentOption = typeof PaymentOption.Type

/** Methods deprecated on 1 October 2026: requests naming them get 503. */
export const deprecatedPaymentOptions: ReadonlyArray<string> = ["crypto", "pix"]

/** The network name shown in quotes and transactions. */
export const transferNetwork = "CVU"

export class Quote extends Class<Quote>("Quote")({
  currency: Schema.Literal("ARS"),
  network: Schema.String,
  amount: ArsText,
  amountReadable: Schema.String,
  address: Cvu,
  alias: Alias
}) {
  /** The quote of an ARS `amount` at `cvu`: typed arguments, so not checked again by the class. */
  static forAmount(amount: Money.Money, cvu: Cvu, alias: Alias): Quote {
    return new Quote(
      {
        currency: "ARS",
        network: transferNetwork,
        amount,
        amountReadable: Money.formatReadable(amount),
        address: cvu,
        alias
      },
      true
    )
  }
}

export class Tax extends Class<Tax>("Tax")({
  tax_amount: ArsNumber,
  tax_rate: Rate,
  tax_type: Schema.String
}) {}

export class TransferDetails extends Class<TransferDetails>("TransferDetails")({
  amount: ArsNumber,
  currency: Schema.Literal("ARS"),
  recipient: Schema.String,
  recipientCuit: Schema.String,
  recipientTitular: Schema.String,
  sender: Schema.String,
  senderCuit: Schema.String,
  senderTitular: Schema.String,
  trxId: Schema.String
}) {}

/**
 * Where a credited transfer arrived and what it was charged, in the wire forms (decimal text,
 * rates as numbers) a payment's transaction and a customer's share, so one client parser reads both.
 */
export const TransferCharges = {
  /** Our CVU that received the money. */
  address: Cvu,
  /** Gross amount transferred. */
  amount: ArsText,
  /** Commission rate. */
  commission: Rate,
  commission_amount: ArsText,
  commission_taxes: Schema.Array(Tax),
  commission_tax_amount: ArsText
}

/** One incoming transfer credited to a payment (SPEC's Transaction table). */
export class Transaction extends Class<Transaction>("Transaction")(
  {
    ...TransferCharges,
    creation_timestamp: Timestamp,
    credited_amount: ArsText,
    currency: Schema.Literal("ARS"),
    network: Schema.String,
    sender_address: Schema.String,
    taxes: Schema.Array(Tax),
    tax_amount: ArsText,
    transaction_status: Schema.Literal("PROCESSED"),
    transaction_data: Schema.Struct({ PROCESSED: TransferDetails }),
    /**
     * What is wrong with the sender's account or CUIT as the bank reported them (omitted when
     * both are valid): the money was credited, and no refund is sent there.
     */
    sender_problems: Omittable(Schema.Array(SenderProblem))
  },
  [undefined, undefined, { identifier: "Transaction" }]
) {}

export class TotalPaid extends Class<TotalPaid>("TotalPaid")({
  amount: ArsText,
  currency: Schema.Literal("ARS")
}) {}

/** Totals over a payment's transactions, present once a transfer has been received. */
export class TransactionFields extends Class<TransactionFields>("TransactionFields")({
  amount: ArsText,
  amountReadable: Schema.String,
  commission_amount: ArsText,
  credited_amount: ArsText,
  currency: Schema.Literal("ARS"),
  network: Schema.String,
  total_paid: TotalPaid
}) {}

export class MotiveChange extends Class<MotiveChange>("MotiveChange")({
  value: Schema.String,
  /** Absent on the first change of a payment created without a motive. */
  previous: Omittable(Schema.String),
  modified_by: UserId,
  modification_timestamp: Timestamp
}) {}

export class PaymentMetadata extends Class<PaymentMetadata>("PaymentMetadata")({
  motive: Schema.Array(MotiveChange)
}) {}

export class ClientData extends Class<ClientData>("ClientData")({
  first_name: Schema.optional(Schema.String),
  last_name: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String),
  dni: Schema.optional(Schema.String),
  cuit: Schema.optional(Schema.String)
}) {}

export class Payment extends Class<Payment>("Payment")({
  id: PaymentId,
  payment_status: PaymentStatus,
  price: Money.PriceFromWire,
  payment_options: Schema.Array(PaymentOption),
  external_id: ExternalId,
  webhook_url: Omittable(Schema.String),
  redirect_url: Omittable(Schema.String),
  motive: Omittable(Schema.String),
  payment_url: Schema.String,
  expiration_timestamp: Timestamp,
  creation_timestamp: Timestamp,
  last_modified_timestamp: Timestamp,
  is_deleted: Schema.Boolean,
  user_id: UserId,
  quotes: Schema.Array(Quote),
  transactions: Schema.Array(Transaction),
  transaction_fields: Schema.optional(TransactionFields),
  metadata: PaymentMetadata,
  client_data: Omittable(ClientData),
  team_id: Omittable(TeamId),
  tags: Schema.Array(Schema.String),
  partner_id: Omittable(PartnerId),
  /** Whether the CVU has been given back to the bank (at expiry); later transfers bounce. */
  cvu_released: Schema.Boolean,
  /** Canonical text of the create request, to recognise a repeated create (internal). */
  creation_request: Schema.String
}) {
  /** The ARS amount the payer is asked for (the quote). */
  get quoteAmount(): Money.Money {
    return this.quotes[0]!.amount
  }
  get cvu(): Cvu {
    return this.quotes[0]!.address
  }
  /** Gross ARS received over all transfers. */
  get totalReceived(): Money.Money {
    return totalReceived(this.transactions)
  }
}

/** Gross ARS received over `transactions`. */
export const totalReceived = (transactions: ReadonlyArray<Transaction>): Money.Money =>
  Money.orThrow(
    Money.sum(
      "ARS",
      transactions.map((t) => t.amount)
    )
  )

/** What can happen to a payment. */
export type PaymentTrigger = "transfer" | "expire" | "reprice" | "extend" | "edit_motive"

/**
 * The state machine as data: which triggers each state accepts. Everything else is a typed
 * `Conflict` (409 on the wire).
 */
export const transitions: Record<PaymentStatus, ReadonlyArray<PaymentTrigger>> = {
  PENDING: ["transfer", "expire", "reprice", "extend", "edit_motive"],
  SUCCESS: ["transfer", "reprice", "edit_motive"],
  OVERPAID: ["transfer", "reprice", "edit_motive"],
  UNDERPAID: ["transfer", "reprice", "edit_motive"],
  EXPIRED: ["edit_motive"]
}

const refusalKey: Record<PaymentTrigger, string> = {
  transfer: "payment.expired",
  expire: "payment.not.pending",
  reprice: "payment.expired",
  extend: "payment.not.pending",
  edit_motive: "payment.not.editable"
}

export const guard = (payment: Payment, trigger: PaymentTrigger): Either.Either<Payment, Conflict> =>
  transitions[payment.payment_status].includes(trigger)
    ? Either.right(payment)
    : Either.left(
        new Conflict({
          key: refusalKey[trigger],
          message: `a ${payment.payment_status} payment does not accept '${trigger}'`
        })
      )

/**
 * The status a payment's amount received gives it against the quote: within `tolerance`
 * (absolute, either side; a negative tolerance counts as none) is SUCCESS; above is OVERPAID;
 * below is UNDERPAID; nothing received is PENDING.
 */
export const statusFor = (
  quote: Money.Money,
  received: Money.Money,
  tolerance: Money.Money
): PaymentStatus => {
  if (Money.isZero(received)) return "PENDING"
  const margin = Money.isNegative(tolerance) ? Money.zero(tolerance.currency) : tolerance
  if (Money.orThrow(Either.flatMap(Money.add(received, margin), (upper) => Money.compare(upper, quote))) < 0)
    return "UNDERPAID"
  if (
    Money.orThrow(Either.flatMap(Money.subtract(received, margin), (lower) => Money.compare(lower, quote))) >
    0
  )
    return "OVERPAID"
  return "SUCCESS"
}

/** `transaction_fields` recomputed from the transactions; absent before the first transfer. */
export const transactionFields = (
  quote: Money.Money,
  transactions: ReadonlyArray<Transaction>
): TransactionFields | undefined => {
  if (transactions.length === 0) return undefined
  const total = (pick: (t: Transaction) => Money.Money) =>
    Money.orThrow(Money.sum("ARS", transactions.map(pick)))
  // Sums of typed amounts: the classes do not check them again (every credited transfer).
  return new TransactionFields(
    {
      amount: quote,
      amountReadable: Money.formatReadable(quote),
      commission_amount: total((t) => t.commission_amount),
      credited_amount: total((t) => t.credited_amount),
      currency: "ARS",
      network: transferNetwork,
      total_paid: new TotalPaid({ amount: total((t) => t.amount), currency: "ARS" }, true)
    },
    true
  )
}

/** What the payer's page says of a paid payment's refunds (absent when none counts). */
export class PublicRefund extends Class<PublicRefund>("PublicRefund")({
  /** Refunded so far, PENDING and SUCCESS refunds together. */
  amount: ArsText,
  /** Whether the refunds return everything the payer sent. */
  full: Schema.Boolean,
  /** Whether some of it is still on its way (a PENDING refund). */
  pending: Schema.Boolean
}) {}

/** What a payer's page needs, readable without credentials. */
export class PublicPayment extends Class<PublicPayment>("PublicPayment")({
  id: PaymentId,
  payment_status: PaymentStatus,
  price: Money.PriceFromWire,
  quotes: Schema.Array(Quote),
  expiration_timestamp: Timestamp,
  motive: Omittable(Schema.String),
  redirect_url: Omittable(Schema.String),
  merchant_name: Schema.String,
  /** The money returned to the payer, once a refund is made. */
  refund: Omittable(PublicRefund)
}) {}
