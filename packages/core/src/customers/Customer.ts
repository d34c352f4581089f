/**
 * Fixed customers: a payer with a permanent CVU and alias who may pay any number of times. Each
 * transfer is kept as a `CustomerTransaction` and adds its credited amount to the balance.
 *
 * The bank alias is the account's alias prefix followed directly by the customer's suffix
 * (SPEC: "alias prefix of the account plus the suffix"), with each `_` of the prefix written as
 * `.` because bank aliases allow only a-z, 0-9, `.` and `-`: prefix `tienda_` + suffix `juan`
 * gives `tienda.juan`. The whole alias must be a valid bank alias (6–20 characters).
 */
import { Either, Schema, Struct } from "effect"
import { Alias, Cvu, isValidAlias, SenderProblem } from "../bank/BankAccount.js"
import { InvalidInput } from "../Errors.js"
import { BankTransactionId, IdString, PathIdString, UserId } from "../Ids.js"
import * as Money from "../Money.js"
import { Tax, TransferCharges } from "../payments/Payment.js"
import type { AliasPrefix } from "../accounts/User.js"
import { ArsNumber, ArsText, HttpUrl, Omittable, Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"
import { EMAIL_PATTERN } from "../internal/text.js"

/**
 * The merchant's id of the customer (a national id number or a UUID). It is part of URL paths
 * (`PathIdString`). Unique per user.
 */
export const CustomerId = PathIdString.pipe(Schema.brand("CustomerId"))
export type CustomerId = typeof CustomerId.Type

export const CustomerTransactionId = IdString.pipe(Schema.brand("CustomerTransactionId"))
export type CustomerTransactionId = typeof CustomerTransactionId.Type

/** The customer's part of the bank alias; the account's prefix goes before it. */
export const AliasSuffix = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9.-]{1,20}$/, {
    message: () => "must be 1-20 characters of lowercase letters, digits, '.' and '-'"
  }),
  Schema.brand("AliasSuffix")
)
export type AliasSuffix = typeof AliasSuffix.Type

export const CustomerName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(200, { message: () => "must be at most 200 characters" })
)

export const Email = Schema.String.pipe(
  Schema.maxLength(254, { message: () => "must be at most 254 characters" }),
  Schema.pattern(EMAIL_PATTERN, { message: () => "must be a valid email address" })
)

export class CustomerContact extends Class<CustomerContact>("CustomerContact")({
  /** Required whenever a contact is sent. */
  email: Email
}) {}

/** The customer's permanent account: its CVU and the full bank alias (prefix + suffix). */
export class BankInfo extends Class<BankInfo>("BankInfo")({
  cvu: Cvu,
  alias: Alias
}) {}

/** SPEC's text of the "Customer payment received" event. */
export const paymentReceivedMessage = "Customer payment received"

/**
 * A fixed customer. `balance` is the sum of the credited amounts (after commission and taxes)
 * of its transfers; it mirrors the ledger account `customerBalance(user_id, customer_id)` and is
 * rewritten from it in the unit of work of every credit.
 */
export class Customer extends Class<Customer>("Customer")({
  customer_id: CustomerId,
  user_id: UserId,
  name: Schema.String,
  /** The alias suffix the merchant chose. */
  alias: AliasSuffix,
  bank_info: BankInfo,
  balance: ArsNumber,
  contact: Schema.NullOr(CustomerContact),
  webhook_url: Schema.NullOr(Schema.String),
  creation_timestamp: Timestamp,
  /** Changes of the customer's data (its alias and CVU); credits do not move it. */
  last_modified_timestamp: Timestamp
}) {}

/** The answer to a create (SPEC: POST /customers/). */
export class CustomerCreated extends Class<CustomerCreated>("CustomerCreated")({
  customer_id: CustomerId,
  bank_info: BankInfo,
  balance: ArsNumber,
  creation_timestamp: Timestamp
}) {
  static fromCustomer(c: Customer): CustomerCreated {
    return new CustomerCreated(Struct.pick(c, "customer_id", "bank_info", "balance", "creation_timestamp"))
  }
}

/** The answer to an alias change (SPEC: PATCH /customers/{customer_id}/alias). */
export class CustomerAliasChanged extends Class<CustomerAliasChanged>("CustomerAliasChanged")({
  customer_id: CustomerId,
  alias: AliasSuffix,
  bank_info: BankInfo,
  last_modified_timestamp: Timestamp
}) {
  static fromCustomer(c: Customer): CustomerAliasChanged {
    return new CustomerAliasChanged(
      Struct.pick(c, "customer_id", "alias", "bank_info", "last_modified_timestamp")
    )
  }
}

/** One element of `data.customers[]` (SPEC: GET /customers/). */
export class CustomerSummary extends Class<CustomerSummary>("CustomerSummary")({
  customer_id: CustomerId,
  name: Schema.String,
  bank_info: BankInfo,
  balance: ArsNumber,
  creation_timestamp: Timestamp
}) {
  static fromCustomer(c: Customer): CustomerSummary {
    return new CustomerSummary(
      Struct.pick(c, "customer_id", "name", "bank_info", "balance", "creation_timestamp")
    )
  }
}

/**
 * One customer as read (GET /customers/{customer_id}): SPEC's Customer fields, with `contact`
 * and `webhook_url` left out when the customer has none.
 */
export class CustomerView extends Class<CustomerView>("CustomerView")({
  ...Customer.fields,
  contact: Omittable(CustomerContact),
  webhook_url: Omittable(Schema.String)
}) {
  static fromCustomer(c: Customer): CustomerView {
    return new CustomerView(
      Struct.pick(
        c,
        "customer_id",
        "user_id",
        "name",
        "alias",
        "bank_info",
        "balance",
        "contact",
        "webhook_url",
        "creation_timestamp",
        "last_modified_timestamp"
      )
    )
  }
}

/**
 * One incoming transfer credited to a customer. Amounts use the wire forms of a payment's
 * transaction (decimal text, rates as numbers) so one client parser reads both.
 */
export class CustomerTransaction extends Class<CustomerTransaction>("CustomerTransaction")(
  {
    transaction_id: CustomerTransactionId,
    customer_id: CustomerId,
    user_id: UserId,
    ...TransferCharges,
    taxes: Schema.Array(Tax),
    tax_amount: ArsText,
    /** What reached the customer's balance: amount − commission − its taxes − taxes. */
    credited_amount: ArsText,
    currency: Schema.Literal("ARS"),
    network: Schema.String,
    sender_address: Schema.String,
    /** As the bank reported it (see `sender_problems`). */
    sender_cuit: Schema.String,
    sender_name: Schema.String,
    bank_transaction_id: BankTransactionId,
    transaction_status: Schema.Literal("PROCESSED"),
    creation_timestamp: Timestamp,
    /** What is wrong with the sender's account or CUIT as the bank reported them (omitted when valid). */
    sender_problems: Omittable(Schema.Array(SenderProblem))
  },
  [undefined, undefined, { identifier: "CustomerTransaction" }]
) {}

export class CreateCustomerRequest extends Class<CreateCustomerRequest>("CreateCustomerRequest")({
  user_id: UserId,
  /** The desired alias suffix. */
  alias: AliasSuffix,
  customer_id: CustomerId,
  name: CustomerName,
  contact: Schema.optional(Schema.NullOr(CustomerContact)),
  webhook_url: Schema.optional(Schema.NullOr(HttpUrl))
}) {}

export class ChangeAliasRequest extends Class<ChangeAliasRequest>("ChangeAliasRequest")({
  /** The new alias suffix. */
  alias: AliasSuffix,
  /** true: a new CVU with the new alias, the old one released; false: keep the CVU if the bank lets us. */
  create_new_cvu: Schema.Boolean
}) {}

/** The key of the error when the account has no alias prefix (SPEC: HTTP 400). */
export const prefixNotSetKey = "user.alias.prefix.not.set"

/**
 * The bank alias of `suffix` under `prefix`: the prefix (`_` written as `.`) then the suffix,
 * at most 20 characters in total and a valid bank alias.
 */
export const bankAlias = (prefix: AliasPrefix, suffix: AliasSuffix): Either.Either<Alias, InvalidInput> => {
  const alias = prefix.replaceAll("_", ".") + suffix
  if (alias.length > 20) {
    return Either.left(
      InvalidInput.of(
        "alias",
        `the alias prefix '${prefix}' plus the alias must be at most 20 characters in total ('${alias}' has ${alias.length})`,
        "customer.alias.invalid"
      )
    )
  }
  if (!isValidAlias(alias)) {
    return Either.left(
      InvalidInput.of(
        "alias",
        `'${alias}' is not a valid bank alias: 6-20 characters of a-z, 0-9, '.' and '-'`,
        "customer.alias.invalid"
      )
    )
  }
  return Either.right(Alias.make(alias))
}

/** The ARS balance a new customer starts with. */
export const zeroBalance: Money.Money = Money.zero("ARS")

/** The transfer log's `target_id` of a customer: customer ids are unique per user only. */
export const transferTargetId = (customer: Customer): string => `${customer.user_id}:${customer.customer_id}`
