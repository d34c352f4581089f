/**
 * Split payments (closed beta): a dedicated CVU that collects funds, payout accounts verified
 * with a second factor, and one payouts instruction executed after a 12-hour security hold.
 * This module holds the records, the request schemas and every state machine, as data.
 */
import { type DateTime, Duration, Either, Schema, Struct } from "effect"
import { Alias, Cuit, Cvu, PayoutAddress } from "../bank/BankAccount.js"
import { Conflict } from "../Errors.js"
import {
  BankTransactionId,
  ExternalId,
  PartnerId,
  PayoutAccountId,
  SplitPaymentId,
  SplitPayoutId,
  UserId,
  VerificationRequestId
} from "../Ids.js"
import * as Money from "../Money.js"
import { ArsInput, ArsText, HttpUrl, Omittable, Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

/** SPEC: payouts are not executed before 12 hours after the instruction is accepted. */
export const holdDuration = Duration.hours(12)
/** How long a verification request (its 2FA code) stays usable. */
export const verificationLifetime = Duration.minutes(10)
/** Wrong codes a verification request tolerates; the last one locks it. */
export const maxVerificationAttempts = 5
/**
 * How long a job run owns a split it claimed for execution. A split left PROCESSING (its runner
 * crashed, or the bank was unavailable) is taken up again once its lease has passed.
 */
export const executionLease = Duration.minutes(5)
export const maxAccountsPerRequest = 20
export const maxPayoutsPerInstruction = 50

// ---------------------------------------------------------------------------------------------
// States and their machines

export const PaymentStatus = Schema.Literal("PENDING", "RECEIVED")
export type PaymentStatus = typeof PaymentStatus.Type

export const PayoutStatus = Schema.Literal("ON_HOLD", "PROCESSING", "SUCCESS", "PARTIAL_FAILURE", "FAILED")
export type PayoutStatus = typeof PayoutStatus.Type
/** The outcome of an executed instruction. */
export type PayoutResult = Extract<PayoutStatus, "SUCCESS" | "PARTIAL_FAILURE" | "FAILED">

/** The state of one payout of an instruction. */
export const PayoutState = Schema.Literal("PENDING", "SUCCESS", "FAILED")
export type PayoutState = typeof PayoutState.Type

export const AccountStatus = Schema.Literal("PENDING_VERIFICATION", "ACTIVE", "DISABLED")
export type AccountStatus = typeof AccountStatus.Type

export const RequestStatus = Schema.Literal("PENDING", "VERIFIED", "LOCKED")
export type RequestStatus = typeof RequestStatus.Type

/** A state machine as data: the states each state may move to. */
export interface Machine<S extends string> {
  readonly name: string
  readonly table: { readonly [K in S]: ReadonlyArray<S> }
}

/** `payment_status`: funds arriving keep a received split RECEIVED. */
export const paymentMachine: Machine<PaymentStatus> = {
  name: "split.payment_status",
  table: { PENDING: ["RECEIVED"], RECEIVED: ["RECEIVED"] }
}

/** `payout_status`, with `NONE` for null (no instruction yet). PROCESSING → PROCESSING is a re-claim. */
export const payoutMachine: Machine<PayoutStatus | "NONE"> = {
  name: "split.payout_status",
  table: {
    NONE: ["ON_HOLD"],
    ON_HOLD: ["PROCESSING"],
    PROCESSING: ["PROCESSING", "SUCCESS", "PARTIAL_FAILURE", "FAILED"],
    SUCCESS: [],
    PARTIAL_FAILURE: [],
    FAILED: []
  }
}

export const payoutStateMachine: Machine<PayoutState> = {
  name: "split.payout.status",
  table: { PENDING: ["SUCCESS", "FAILED"], SUCCESS: [], FAILED: [] }
}

/** A pending account may be disabled too (an abandoned request); an active one only disabled. */
export const accountMachine: Machine<AccountStatus> = {
  name: "split.account.status",
  table: { PENDING_VERIFICATION: ["ACTIVE", "DISABLED"], ACTIVE: ["DISABLED"], DISABLED: [] }
}

/** A wrong code keeps a request PENDING (PENDING → PENDING) until the attempts run out. */
export const requestMachine: Machine<RequestStatus> = {
  name: "split.verification.status",
  table: { PENDING: ["PENDING", "VERIFIED", "LOCKED"], VERIFIED: [], LOCKED: [] }
}

/** `to` when the machine allows `from → to`; else a `Conflict` (409), with `key` when given. */
export const transition = <S extends string, T extends S>(
  machine: Machine<S>,
  from: S,
  to: T,
  key?: string
): Either.Either<T, Conflict> =>
  machine.table[from].includes(to)
    ? Either.right(to)
    : Either.left(
        new Conflict({
          key: key ?? `${machine.name}.transition.invalid`,
          message: `${machine.name} cannot go from ${from} to ${to}`
        })
      )

// ---------------------------------------------------------------------------------------------
// Records

export class SplitPayment extends Class<SplitPayment>("SplitPayment")({
  split_payment_id: SplitPaymentId,
  user_id: UserId,
  /** The partner that created it; its `external_id` is unique per (user, partner or none). */
  partner_id: Schema.NullOr(PartnerId),
  external_id: ExternalId,
  webhook_url: Schema.NullOr(Schema.String),
  cvu: Cvu,
  alias: Alias,
  payment_status: PaymentStatus,
  payout_status: Schema.NullOr(PayoutStatus),
  /** Null until the payouts instruction is accepted; then the end of the hold. */
  hold_until: Schema.NullOr(Timestamp),
  /** Gross total of the transfers received. */
  amount_received: ArsText,
  /** What reached the split's balance after fees. */
  amount_credited: ArsText,
  /** The instruction's total, moved from the balance to held; null before the instruction. */
  payouts_total: Schema.NullOr(ArsText),
  /** While PROCESSING, until when the job run that claimed it owns it (internal). */
  lease_until: Schema.NullOr(Timestamp),
  creation_timestamp: Timestamp,
  last_modified_timestamp: Timestamp
}) {}

/** A new split's state: PENDING, nothing received, no instruction, hold or lease yet. */
export const initialState = () =>
  ({
    payment_status: "PENDING",
    payout_status: null,
    hold_until: null,
    amount_received: Money.zero("ARS"),
    amount_credited: Money.zero("ARS"),
    payouts_total: null,
    lease_until: null
  }) as const

/**
 * When a split's instruction is (next) due for execution: the end of the hold while ON_HOLD,
 * the end of the current run's lease while PROCESSING; never otherwise.
 */
export const dueAt = (split: SplitPayment): DateTime.Utc | null =>
  split.payout_status === "ON_HOLD"
    ? split.hold_until
    : split.payout_status === "PROCESSING"
      ? split.lease_until
      : null

/** `payout_status` as a state of `payoutMachine`. */
export const payoutStatusOf = (split: SplitPayment): PayoutStatus | "NONE" => split.payout_status ?? "NONE"

/** One transfer of an instruction, to one payout account. */
export class SplitPayout extends Class<SplitPayout>("SplitPayout")({
  /** Also the `reference` of its bank transfer: the bank deduplicates on it. */
  payout_id: SplitPayoutId,
  split_payment_id: SplitPaymentId,
  account_id: PayoutAccountId,
  /** The verified bank account (CVU/CBU) the money goes to. */
  destination: Schema.String,
  amount: ArsText,
  status: PayoutState,
  bank_transaction_id: Schema.NullOr(BankTransactionId),
  failure_reason: Schema.NullOr(Schema.String),
  /** Its order within the instruction. */
  position: Schema.Int,
  creation_timestamp: Timestamp,
  /** When it became SUCCESS or FAILED. */
  executed_timestamp: Schema.NullOr(Timestamp)
}) {}

/** A whitelisted destination of payouts. Never modified once ACTIVE, except to disable it. */
export class PayoutAccount extends Class<PayoutAccount>("PayoutAccount")({
  account_id: PayoutAccountId,
  user_id: UserId,
  /** The partner that created it, if any (the account belongs to the user). */
  partner_id: Omittable(PartnerId),
  /** As given: CVU, CBU or alias. */
  address: PayoutAddress,
  /** The CVU/CBU the bank resolved the address to at creation; payouts go here. */
  bank_account: Schema.String,
  holder_name: Schema.String,
  holder_cuit: Cuit,
  label: Omittable(Schema.String),
  status: AccountStatus,
  request_id: VerificationRequestId,
  creation_timestamp: Timestamp,
  activation_timestamp: Omittable(Timestamp),
  disabled_timestamp: Omittable(Timestamp),
  last_modified_timestamp: Timestamp
}) {}

/** One 2FA verification covering every account created in one request. */
export class VerificationRequest extends Class<VerificationRequest>("VerificationRequest")({
  request_id: VerificationRequestId,
  user_id: UserId,
  account_ids: Schema.Array(PayoutAccountId),
  status: RequestStatus,
  /** Wrong codes tried so far. */
  attempts: Schema.Int,
  exp_timestamp: Timestamp,
  creation_timestamp: Timestamp,
  verified_timestamp: Schema.NullOr(Timestamp)
}) {}

// ---------------------------------------------------------------------------------------------
// Reads (the wire shapes)

/** A split payment as read: its state, what was received, its balance and each payout. */
export class SplitPaymentView extends Class<SplitPaymentView>("SplitPaymentView")({
  split_payment_id: SplitPaymentId,
  external_id: ExternalId,
  webhook_url: Omittable(Schema.String),
  partner_id: Omittable(PartnerId),
  /** `payout_status` and `hold_until` are sent as `null`, as SPEC shows, until the instruction. */
  ...Struct.pick(
    SplitPayment.fields,
    "cvu",
    "alias",
    "payment_status",
    "payout_status",
    "hold_until",
    "amount_received",
    "amount_credited"
  ),
  /** Available balance: credited, minus the instruction's total, plus failed payouts returned. */
  balance: ArsText,
  payouts: Schema.Array(
    Schema.Struct({
      payout_id: SplitPayoutId,
      account_id: PayoutAccountId,
      amount: ArsText,
      status: PayoutState,
      bank_transaction_id: Omittable(BankTransactionId),
      failure_reason: Omittable(Schema.String),
      executed_timestamp: Omittable(Timestamp)
    })
  ),
  creation_timestamp: Timestamp,
  last_modified_timestamp: Timestamp
}) {
  static of(
    split: SplitPayment,
    balance: Money.Money,
    payouts: ReadonlyArray<SplitPayout>
  ): SplitPaymentView {
    return new SplitPaymentView({
      split_payment_id: split.split_payment_id,
      external_id: split.external_id,
      webhook_url: split.webhook_url,
      partner_id: split.partner_id,
      cvu: split.cvu,
      alias: split.alias,
      payment_status: split.payment_status,
      payout_status: split.payout_status,
      hold_until: split.hold_until,
      amount_received: split.amount_received,
      amount_credited: split.amount_credited,
      balance,
      payouts: payouts.map((p) => ({
        payout_id: p.payout_id,
        account_id: p.account_id,
        amount: p.amount,
        status: p.status,
        bank_transaction_id: p.bank_transaction_id,
        failure_reason: p.failure_reason,
        executed_timestamp: p.executed_timestamp
      })),
      creation_timestamp: split.creation_timestamp,
      last_modified_timestamp: split.last_modified_timestamp
    })
  }
}

/** The answer to creating payout accounts: the one verification request covering them all. */
export class VerificationRequestView extends Class<VerificationRequestView>("VerificationRequestView")({
  request_id: VerificationRequestId,
  exp_timestamp: Timestamp,
  status: RequestStatus,
  attempts_left: Schema.Int,
  accounts: Schema.Array(PayoutAccount)
}) {
  static of(request: VerificationRequest, accounts: ReadonlyArray<PayoutAccount>): VerificationRequestView {
    return new VerificationRequestView({
      request_id: request.request_id,
      exp_timestamp: request.exp_timestamp,
      status: request.status,
      attempts_left: Math.max(0, maxVerificationAttempts - request.attempts),
      accounts
    })
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

export class CreateSplitPaymentRequest extends Class<CreateSplitPaymentRequest>("CreateSplitPaymentRequest")({
  external_id: ExternalId,
  webhook_url: Schema.optional(HttpUrl)
}) {}

export class PayoutAccountInput extends Class<PayoutAccountInput>("PayoutAccountInput")({
  address: PayoutAddress,
  label: Schema.optional(Schema.String.pipe(Schema.maxLength(100)))
}) {}

/** SPEC: payout accounts are always created as a list, even for one account. */
export const PayoutAccountList = Schema.Array(PayoutAccountInput).pipe(
  Schema.minItems(1, { message: () => "must hold at least one account" }),
  Schema.maxItems(maxAccountsPerRequest, {
    message: () => `at most ${maxAccountsPerRequest} accounts per request`
  })
)

export class VerifyAccountsRequest extends Class<VerifyAccountsRequest>("VerifyAccountsRequest")({
  request_id: VerificationRequestId,
  code: Schema.String.pipe(Schema.maxLength(32))
}) {}

/** A positive ARS amount with at most 2 decimals, as a JSON number, at most the maximum. */
export const PayoutAmount = ArsInput.pipe(
  Schema.filter((m) => Money.isPositive(m) || "amount must be positive")
)

export class PayoutInstructionItem extends Class<PayoutInstructionItem>("PayoutInstructionItem")({
  account_id: PayoutAccountId,
  amount: PayoutAmount
}) {}

export class InstructPayoutsRequest extends Class<InstructPayoutsRequest>("InstructPayoutsRequest")({
  payouts: Schema.Array(PayoutInstructionItem).pipe(
    Schema.minItems(1, { message: () => "must hold at least one payout" }),
    Schema.maxItems(maxPayoutsPerInstruction, {
      message: () => `at most ${maxPayoutsPerInstruction} payouts per instruction`
    })
  )
}) {}

/** What one `Splits.runDue` did. */
export interface SplitRunReport {
  /** Splits whose instruction finished (SUCCESS, PARTIAL_FAILURE or FAILED). */
  readonly finished: number
  /** Payouts the bank accepted. */
  readonly sent: number
  /** Payouts that failed; their amounts went back to the split's balance. */
  readonly payouts_failed: number
  /** Work that could not be completed now (bank unavailable, storage error); retried later. */
  readonly failed: number
}

// ---------------------------------------------------------------------------------------------
// Rules

/** The instruction's outcome from its settled payouts: all sent, none sent, or some of each. */
export const resultOf = (payouts: ReadonlyArray<SplitPayout>): PayoutResult => {
  const succeeded = payouts.filter((p) => p.status === "SUCCESS").length
  return succeeded === payouts.length ? "SUCCESS" : succeeded === 0 ? "FAILED" : "PARTIAL_FAILURE"
}

/**
 * Why a split refuses an incoming transfer, if it does. Once the (single) instruction is accepted
 * nothing more could ever be paid out, so later money is returned to its sender.
 */
export const refusal = (split: SplitPayment, amount: Money.Money): string | undefined =>
  amount.currency !== "ARS"
    ? "transfers are in ARS only"
    : split.payout_status !== null
      ? "the split payment's payouts were already instructed"
      : undefined
