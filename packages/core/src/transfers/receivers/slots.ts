/**
 * The receivers bound to their storage, for `Transfers`' unit of work. A `Slot` is one receiver
 * read under its row lock: it credits transfers in turn through the receiver's pure `apply`,
 * keeping the state each credit leaves for the next, and finally stores the last state (and a
 * customer's transactions). Nothing here commits: `Transfers` runs it inside its unit of work.
 */
import { DateTime, Effect, Either, Option } from "effect"
import type { User } from "../../accounts/User.js"
import { UserRepository } from "../../accounts/UserRepository.js"
import type { IncomingTransfer } from "../../bank/BankProvider.js"
import type { Cvu } from "../../bank/BankAccount.js"
import { CustomerId, CustomerTransactionId } from "../../customers/Customer.js"
import { CustomerRepository } from "../../customers/CustomerRepository.js"
import type { SplitPaymentId, UserId } from "../../Ids.js"
import { newId } from "../../internal/ids.js"
import { PaymentRepository } from "../../payments/PaymentRepository.js"
import { SplitRepository } from "../../splits/SplitRepository.js"
import type { CvuEntry, CvuOwner } from "../../bank/CvuDirectory.js"
import type * as FeePolicy from "../FeePolicy.js"
import * as CustomerReceiver from "./customer.js"
import * as PaymentReceiver from "./payment.js"
import type { Apply, Credit, Refusal, Refuse } from "./receiver.js"
import * as SplitReceiver from "./split.js"

/** One receiver, read and locked, crediting transfers in turn. */
export interface Slot {
  /** Its id in the transfer log (also of a bounce of money it refused). */
  readonly target_id: string
  readonly user_id: UserId
  readonly kind: FeePolicy.TransferKind
  /** Whether money reaching `cvu` is this receiver's (a customer keeps only its current CVU). */
  readonly holds: (cvu: Cvu) => boolean
  /** Why the receiver would return `transfer` now, if it would (before fees are computed). */
  readonly refusal: (transfer: IncomingTransfer, now: DateTime.Utc) => Option.Option<Refusal>
  /** Credits `transfer` on the current state and keeps the state it leaves, or refuses it. */
  readonly credit: (
    transfer: IncomingTransfer,
    fees: FeePolicy.Fees,
    now: DateTime.Utc
  ) => Effect.Effect<Either.Either<Credit<unknown>, Refusal>>
  /** Back to the state as read, forgetting the credits made. */
  readonly reset: () => void
  /** Stores what the credits made (nothing when none were). */
  readonly store: Effect.Effect<void>
}

/** A slot and the state its credits left (`undefined` when it credited nothing). */
type Stateful<S> = Slot & { readonly credited: () => S | undefined }

/** Reads the receivers of `entries` under their locks; those no longer found are left out. */
export type Open = (
  entries: ReadonlyArray<CvuEntry>
) => Effect.Effect<ReadonlyArray<readonly [entry: CvuEntry, slot: Slot]>>

/** A slot over the pure `apply` of one receiver and its state as read. */
const slotOf = <S, C extends Credit<S>>(options: {
  readonly initial: S
  readonly target_id: string
  readonly user_id: UserId
  readonly kind: FeePolicy.TransferKind
  readonly holds: (cvu: Cvu) => boolean
  /** The state a credit starts from (a customer's next transaction id). */
  readonly prepare: (state: S) => Effect.Effect<S>
  readonly refusal: Refuse<S>
  readonly apply: Apply<S, C>
  readonly store: (last: S, credits: ReadonlyArray<C>) => Effect.Effect<void>
}): Stateful<S> => {
  let state = options.initial
  let credits: Array<C> = []
  return {
    target_id: options.target_id,
    user_id: options.user_id,
    kind: options.kind,
    holds: options.holds,
    refusal: (transfer, now) => Either.getLeft(options.refusal(state, transfer, now)),
    credit: (transfer, fees, now) =>
      Effect.map(options.prepare(state), (prepared) => {
        const result = options.apply(prepared, transfer, fees, now)
        if (Either.isRight(result)) {
          state = result.right.next
          credits.push(result.right)
        }
        return result
      }),
    reset: () => {
      state = options.initial
      credits = []
    },
    store: Effect.suspend(() => (credits.length === 0 ? Effect.void : options.store(state, credits))),
    credited: () => (credits.length === 0 ? undefined : state)
  }
}

/** The receivers of every kind of CVU owner, reading and writing through their repositories. */
export const make = Effect.gen(function* () {
  const payments = yield* PaymentRepository
  const customers = yield* CustomerRepository
  const splits = yield* SplitRepository
  const users = yield* UserRepository

  /** The payments' slots, each with the payment its credits left: `storeAll` writes them together. */
  const creditedPayment = new WeakMap<Slot, () => PaymentReceiver.PaymentState["payment"] | undefined>()

  const paymentSlot = (payment: PaymentReceiver.PaymentState["payment"], owner: Option.Option<User>) => {
    const slot = slotOf({
      initial: { payment, owner },
      target_id: payment.id,
      user_id: payment.user_id,
      kind: "payment",
      holds: (cvu) => cvu === payment.cvu,
      prepare: Effect.succeed,
      refusal: PaymentReceiver.refusal,
      apply: PaymentReceiver.apply,
      store: (last) => payments.update(last.payment)
    })
    creditedPayment.set(slot, () => slot.credited()?.payment)
    return slot
  }

  /** Payments: one statement reads and locks them all (`findByCvusForUpdate`). */
  const openPayments: Open = (entries) =>
    Effect.gen(function* () {
      const found = new Map(
        (yield* payments.findByCvusForUpdate(entries.map((e) => e.cvu))).map((p) => [p.id as string, p])
      )
      const owners = new Map<string, Option.Option<User>>()
      const opened: Array<readonly [CvuEntry, Slot]> = []
      for (const entry of entries) {
        const payment = found.get(entry.owner_id)
        if (payment === undefined) continue
        if (!owners.has(payment.user_id)) owners.set(payment.user_id, yield* users.findById(payment.user_id))
        opened.push([entry, paymentSlot(payment, owners.get(payment.user_id)!)])
      }
      return opened
    })

  const openCustomers: Open = (entries) =>
    Effect.map(
      Effect.forEach(entries, (entry) =>
        Effect.map(customers.findByIdForUpdate(entry.user_id, CustomerId.make(entry.owner_id)), (found) =>
          Option.map(found, (customer) => {
            const slot = slotOf({
              // Each credit takes a new transaction id (`prepare`); none is taken before.
              initial: { customer, transaction_id: CustomerTransactionId.make("ctx_none") },
              target_id: CustomerReceiver.targetId(customer),
              user_id: customer.user_id,
              kind: "customer",
              holds: (cvu) => cvu === customer.bank_info.cvu,
              prepare: (state) =>
                Effect.map(newId("ctx"), (id) => ({
                  ...state,
                  transaction_id: CustomerTransactionId.make(id)
                })),
              refusal: CustomerReceiver.refusal,
              apply: CustomerReceiver.apply,
              store: (last, credits) =>
                Effect.zipRight(
                  Effect.forEach(credits, (c) => customers.insertTransaction(c.transaction), {
                    discard: true
                  }),
                  customers.update(last.customer)
                ).pipe(Effect.orDie)
            })
            return [entry, slot] as const
          })
        )
      ),
      (slots) => slots.flatMap(Option.toArray)
    )

  const openSplits: Open = (entries) =>
    Effect.map(
      Effect.forEach(entries, (entry) =>
        Effect.map(splits.findByIdForUpdate(entry.owner_id as SplitPaymentId), (found) =>
          Option.map(found, (split) => {
            const slot = slotOf({
              initial: split,
              target_id: split.split_payment_id,
              user_id: split.user_id,
              kind: "split",
              holds: (cvu) => cvu === split.cvu,
              prepare: Effect.succeed,
              refusal: SplitReceiver.refusal,
              apply: SplitReceiver.apply,
              store: (last) => splits.update(last)
            })
            return [entry, slot] as const
          })
        )
      ),
      (slots) => slots.flatMap(Option.toArray)
    )

  const byOwner: Record<CvuOwner, Open> = {
    payment: openPayments,
    customer: openCustomers,
    split_payment: openSplits
  }

  /** Opens the receiver of each entry, each kind read in its own statements. */
  const open: Open = (entries) =>
    Effect.map(
      Effect.forEach(["payment", "customer", "split_payment"] as const, (owner) =>
        byOwner[owner](entries.filter((e) => e.owner === owner))
      ),
      (opened) => opened.flat()
    )

  /**
   * Stores what the credits of `slots` made: the payments credited in one statement
   * (`PaymentRepository.updateAll`), then each other slot's.
   */
  const storeAll = (slots: Iterable<Slot>) =>
    Effect.suspend(() => {
      const credited: Array<PaymentReceiver.PaymentState["payment"]> = []
      const others: Array<Slot> = []
      for (const slot of slots) {
        const payment = creditedPayment.get(slot)
        if (payment === undefined) others.push(slot)
        else {
          const last = payment()
          if (last !== undefined) credited.push(last)
        }
      }
      return Effect.zipRight(
        credited.length === 0 ? Effect.void : payments.updateAll(credited),
        Effect.forEach(others, (slot) => slot.store, { discard: true })
      )
    })

  return { open, storeAll } as const
})
