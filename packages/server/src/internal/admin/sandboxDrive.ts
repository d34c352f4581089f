/**
 * Driving the sandbox from the operator's shell (`cobro sandbox pay`, `cobro sandbox clock`): the
 * faucet and the merchants' test clocks, the same services as `POST /sandbox/faucet/{cvu}` and
 * `POST /sandbox/clock/advance`, called for a merchant named by the operator instead of a token.
 * Both exist only in sandbox mode: elsewhere `sandbox.only` (`NotPermitted`).
 */
import { BankAccount, Errors, Money, Spans, type Ids } from "@cobro/core"
import { CustomerRepository, PaymentRepository, SplitRepository, UserRepository } from "@cobro/core/ports"
import { Faucet, TestClocks } from "@cobro/bank-sandbox"
import { Context, DateTime, Duration, Effect, Option, ParseResult, Schema } from "effect"
import { paymentIdFrom, userIdFrom } from "./input.js"

/** The sandbox-only service `tag`, or `sandbox.only` naming `what` exists only in `where`. */
export const sandboxOnly = <I, S>(
  tag: Context.Tag<I, S>,
  what: string,
  where = "sandbox mode (COBRO_MODE=sandbox)"
) =>
  Effect.flatMap(Effect.serviceOption(tag), (found) =>
    Option.match(found, {
      onSome: Effect.succeed,
      onNone: () =>
        Effect.fail(
          new Errors.NotPermitted({
            key: "sandbox.only",
            message: `${what} exist only in ${where}`
          })
        )
    })
  )

const firstIssue = (field: string) => (error: ParseResult.ParseError) =>
  Errors.InvalidInput.of(field, ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "is invalid")

/** What `sandboxPay` credited. */
export interface SandboxPaid {
  readonly cvu: string
  readonly user_id: string
  /** What the CVU belongs to: a payment, a customer or a split payment. */
  readonly target: "payment" | "customer" | "split_payment"
  readonly target_id: string
  readonly amount: string
  /** The engine's outcome: `Credited`, `Bounced` (with `reason`) or `Duplicate`. */
  readonly outcome: string
  readonly reason?: string
  readonly bank_transaction_id: string
  /** The payment's state after the transfer (a payment's CVU). */
  readonly payment_status?: string
}

const CVU = /^\d{22}$/

/** Whose CVU it is, and what it belongs to: a payment, a customer or a split payment. */
const ownerOf = (target: string) =>
  Effect.gen(function* () {
    const payments = yield* PaymentRepository.PaymentRepository
    if (!CVU.test(target)) {
      const id = yield* paymentIdFrom(target)
      const payment = yield* payments.findById(id)
      if (Option.isNone(payment)) return yield* Errors.NotFound.of("payment", id)
      return { cvu: payment.value.cvu, payment: Option.some(payment.value), kind: "payment" as const }
    }
    const cvu = yield* Schema.decodeUnknown(BankAccount.Cvu)(target).pipe(Effect.mapError(firstIssue("cvu")))
    const payment = yield* payments.findByCvu(cvu)
    if (Option.isSome(payment)) return { cvu, payment, kind: "payment" as const }
    const customer = yield* (yield* CustomerRepository.CustomerRepository).findByCvu(cvu)
    if (Option.isSome(customer)) {
      return {
        cvu,
        payment: Option.none(),
        kind: "customer" as const,
        user: customer.value.user_id,
        id: customer.value.customer_id
      }
    }
    const split = yield* (yield* SplitRepository.SplitRepository).findByCvu(cvu)
    if (Option.isSome(split)) {
      return {
        cvu,
        payment: Option.none(),
        kind: "split_payment" as const,
        user: split.value.user_id,
        id: split.value.split_payment_id
      }
    }
    return yield* Errors.NotFound.of("cvu", cvu)
  })

/**
 * A simulated transfer to a payment (by id or CVU), a customer's or a split payment's CVU, from
 * the sandbox bank, ingested as a bank notification is. `amount` (pesos, at most 2 decimals)
 * defaults, for a payment, to what is left to pay; a customer's or split's CVU needs it.
 */
export const sandboxPay: (
  target: string,
  amount: string | undefined
) => Effect.Effect<SandboxPaid, Errors.DomainError, SandboxPayServices> = Spans.fn("Admin.sandboxPay")(
  function* (target: string, amount: string | undefined) {
    const faucet = yield* sandboxOnly(Faucet.Faucet, "the faucet and its transfers")
    const payments = yield* PaymentRepository.PaymentRepository
    const found = yield* ownerOf(target.trim())
    const owner: Ids.UserId = Option.isSome(found.payment)
      ? found.payment.value.user_id
      : (found as { user: Ids.UserId }).user
    const targetId = Option.isSome(found.payment) ? found.payment.value.id : (found as { id: string }).id
    let pesos: number
    if (amount !== undefined) {
      pesos = /^\s*\d+(?:[.,]\d{1,2})?\s*$/.test(amount)
        ? Number(amount.trim().replace(",", "."))
        : Number.NaN
      if (!(pesos > 0))
        return yield* Errors.InvalidInput.of(
          "amount",
          "must be a positive amount of pesos with at most 2 decimals, e.g. 1500 or 1500.50"
        )
    } else if (Option.isSome(found.payment)) {
      const left = found.payment.value.quoteAmount.minor - found.payment.value.totalReceived.minor
      if (left <= 0n)
        return yield* Errors.InvalidInput.of("amount", "nothing is left to pay: give --amount to send more")
      pesos = Number(Money.format(Money.make(left, "ARS")))
    } else {
      return yield* Errors.InvalidInput.of(
        "amount",
        `a ${found.kind === "customer" ? "customer's" : "split payment's"} CVU takes any amount: give --amount`
      )
    }
    const request = yield* Schema.decodeUnknown(Faucet.FaucetRequest)({ amount: pesos }).pipe(
      Effect.mapError(firstIssue("amount"))
    )
    const { outcome, transfer } = yield* faucet.send(owner, found.cvu, request)
    const after = Option.isSome(found.payment)
      ? yield* payments.findById(found.payment.value.id)
      : Option.none()
    const paid: SandboxPaid = {
      cvu: found.cvu,
      user_id: owner,
      target: found.kind,
      target_id: targetId,
      amount: Money.format(transfer.amount),
      outcome: outcome._tag,
      ...(outcome._tag === "Bounced" ? { reason: outcome.reason } : {}),
      bank_transaction_id: transfer.bank_transaction_id,
      ...(Option.isSome(after) ? { payment_status: after.value.payment_status } : {})
    }
    return paid
  }
)

type SandboxPayServices =
  | PaymentRepository.PaymentRepository
  | CustomerRepository.CustomerRepository
  | SplitRepository.SplitRepository

/** A merchant's test clock as the CLI prints it, with what an advance ran. */
export interface SandboxClockView {
  readonly user_id: string
  readonly now: string
  readonly offset_seconds: number
  /** After an advance: PENDING payments it expired, and webhook deliveries it attempted. */
  readonly expired?: number
  readonly webhooks_attempted?: number
}

/** `6d`, `12h`, `30m`, `90s` (or `6 days`…) as whole seconds. */
export const durationSeconds = (text: string): Option.Option<number> => {
  const match = /^\s*(\d+)\s*(s|sec|seconds?|m|min|minutes?|h|hours?|d|days?)\s*$/i.exec(text)
  if (match === null) return Option.none()
  const unit = match[2]!.toLowerCase()
  const scale = unit.startsWith("d") ? 86_400 : unit.startsWith("h") ? 3_600 : unit.startsWith("m") ? 60 : 1
  return Option.some(Number(match[1]) * scale)
}

/**
 * Reads merchant `userId`'s test clock, or moves it (`{seconds}` forward, or `{to}` an instant)
 * and runs that merchant's work that became due (expiries, payouts, webhooks), as
 * `POST /sandbox/clock/advance` does. Other merchants' clocks do not move.
 */
export const sandboxClock = Spans.fn("Admin.sandboxClock")(function* (
  userId: string,
  move: { readonly seconds?: number; readonly to?: string } | undefined
) {
  const clocks = yield* sandboxOnly(TestClocks.TestClocks, "test clocks")
  const user = yield* userIdFrom(userId)
  if (Option.isNone(yield* (yield* UserRepository.UserRepository).findById(user))) {
    return yield* Errors.NotFound.of("user", user)
  }
  const view = (reading: TestClocks.ClockReading) => ({
    user_id: user,
    now: DateTime.formatIso(reading.now),
    offset_seconds: Math.floor(Duration.toSeconds(reading.offset))
  })
  if (move === undefined) return view(yield* clocks.read(user)) as SandboxClockView
  const request = yield* Schema.decodeUnknown(TestClocks.AdvanceRequest)(move).pipe(
    Effect.mapError((error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      return Errors.InvalidInput.of(
        issue?.path[0] === "to" ? "to" : "duration",
        issue?.message ?? "is invalid"
      )
    })
  )
  const report = yield* clocks.advance(user, request)
  return {
    ...view(report),
    expired: report.jobs.expired,
    webhooks_attempted: report.webhooks.attempted
  } as SandboxClockView
})
