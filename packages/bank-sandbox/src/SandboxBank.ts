/**
 * An in-memory bank behind the `BankProvider` port, plus the controls a test (or a demo) uses to
 * play the bank's side: money arriving, holders existing, the bank refusing things. Every number
 * it issues passes the real check-digit rules, and all randomness comes from `Random`, so a
 * seeded `Random` replays the same CVUs, aliases and transaction ids.
 *
 * Its memory follows what is open, not what happened: it forgets a closed account, and keeps a
 * transfer in only in its statement (the newest `statementSize`, for `statementRetention`). It
 * keeps only the payouts it sent (by reference, for their idempotency) and the transfers it
 * returned, so a server running on it for months grows with those, not with its payments.
 */
import {
  Chunk,
  Context,
  DateTime,
  Effect,
  Either,
  Hash,
  HashMap,
  HashSet,
  Layer,
  Option,
  SynchronizedRef
} from "effect"
import { BankAccount, BankProvider as Bank, Ids, Money, RealTime as Time, Spans } from "@cobro/core"
import * as Holders from "./internal/holders.js"
import * as Outgoing from "./internal/outgoing.js"
import { fresh, randomAlias, randomCbu, randomCuit, randomCvu } from "./internal/random.js"
import * as Statement from "./internal/statement.js"

const DEFAULT_SENDER_NAME = "Pagador Sandbox"
export { statementRetention, statementSize } from "./internal/statement.js"

export type TransferFailure = "rejected" | "unavailable"

export type SentTransfer = Outgoing.SentTransfer
export type Received = Outgoing.Received

export interface SimulateIncoming {
  readonly cvu: BankAccount.Cvu
  readonly amount: Money.Money
  /** The sender's CUIT as the bank reports it (any text: a bank's may be wrong); a valid random one when omitted. */
  readonly senderCuit?: string | undefined
  readonly senderName?: string | undefined
  /** The sender's CVU/CBU; a valid random CBU when omitted. */
  readonly senderAccount?: string | undefined
}

export type ExternalHolder = Holders.ExternalHolder

export class SandboxBank extends Context.Tag("@cobro/bank-sandbox/SandboxBank")<
  SandboxBank,
  {
    /**
     * Creates the record of a transfer into `cvu` and books it in the statement
     * (`incomingTransfers`); the engine's faucet ingests it, not this.
     */
    readonly simulateIncoming: (input: SimulateIncoming) => Effect.Effect<Bank.IncomingTransfer>
    /**
     * `simulateIncoming` in two steps, for a caller that decides between them whether the
     * transfer happens at all (the faucet refuses a CVU that is not the caller's, and then
     * nothing reaches the statement): the record of a transfer into `cvu`, numbered and sealed
     * as this bank's own (`returnTransfer` takes it) but not booked...
     */
    readonly drawIncoming: (input: SimulateIncoming) => Effect.Effect<Bank.IncomingTransfer>
    /** ...and the booking of a drawn transfer in the statement, at the time it is booked. */
    readonly bookIncoming: (transfer: Bank.IncomingTransfer) => Effect.Effect<void>
    /** Makes an external account known to `lookupHolder` (by its CVU/CBU and its alias). */
    readonly registerHolder: (holder: ExternalHolder) => Effect.Effect<void>
    /** Undoes `registerHolder` of this CVU/CBU (and its alias); unknown: nothing happens. */
    readonly forgetHolder: (account: string) => Effect.Effect<void>
    /** Whether a CVU, CBU or alias names an account the bank knows: its own open one or a registered one. */
    readonly knows: (address: string) => Effect.Effect<boolean>
    /**
     * The transfers sent to `account` (a CVU/CBU; sent to it or to its alias) that were not
     * refused or failed, newest first, at most `limit`.
     */
    readonly receivedBy: (account: string, limit: number) => Effect.Effect<ReadonlyArray<Outgoing.Received>>
    /** From now on `changeAlias` on this CVU fails with `alias_change_refused`. */
    readonly refuseAliasChange: (cvu: BankAccount.Cvu) => Effect.Effect<void>
    /** Undoes `refuseAliasChange`. */
    readonly allowAliasChange: (cvu: BankAccount.Cvu) => Effect.Effect<void>
    /** `sendTransfer` to this address (or an alias resolving to it) fails with `reason`. */
    readonly failTransfersTo: (address: string, reason: TransferFailure) => Effect.Effect<void>
    /** Undoes `failTransfersTo` and `failTransfersLate` for this address. */
    readonly clearFailures: (address: string) => Effect.Effect<void>
    /** Transfers sent out, in order, each once, with their current status. */
    readonly sentTransfers: Effect.Effect<ReadonlyArray<SentTransfer>>
    /**
     * From now on new transfers are accepted `pending` and answer `Pending` to this many status
     * queries, then complete; 0 (the default) completes them at once.
     */
    readonly holdTransfers: (statusQueries: number) => Effect.Effect<void>
    /** The next `count` transfers are applied, then answered with `unavailable` (a timeout). */
    readonly timeOutTransfers: (count: number) => Effect.Effect<void>
    /** Transfers to this address (as given) are accepted `pending`, then fail with `reason`. */
    readonly failTransfersLate: (address: string, reason: string) => Effect.Effect<void>
    /** Settles a pending transfer now, as the bank would. */
    readonly settleTransfer: (
      reference: string,
      outcome: { readonly status: "completed" } | { readonly status: "failed"; readonly reason: string }
    ) => Effect.Effect<void>
    /** Transfers returned to their senders, in order, each once. */
    readonly returnedTransfers: Effect.Effect<ReadonlyArray<Bank.IncomingTransfer>>
    readonly isOpen: (cvu: BankAccount.Cvu) => Effect.Effect<boolean>
  }
>() {}

interface State extends Holders.HolderState {
  readonly refused: HashSet.HashSet<BankAccount.Cvu>
  readonly failures: HashMap.HashMap<string, TransferFailure>
  /** Outgoing transfers by our reference (the bank's idempotency key), and their faults. */
  readonly outgoing: Outgoing.OutgoingState
  readonly returnedIds: HashSet.HashSet<string>
  readonly returned: Chunk.Chunk<Bank.IncomingTransfer>
}

/** A bank with nothing open: its own maps (mutated in place, see `HolderState`). */
const emptyState = (): State => ({
  open: new Map(),
  aliases: new Map(),
  holders: HashMap.empty(),
  ownHolders: new Map(),
  refused: HashSet.empty(),
  failures: HashMap.empty(),
  outgoing: Outgoing.emptyOutgoing,
  returnedIds: HashSet.empty(),
  returned: Chunk.empty()
})

const bankError = (reason: Bank.BankError["reason"], message: string) =>
  new Bank.BankError({ reason, message })

const { aliasTaken, resolve } = Holders

/**
 * Builds one shared state and returns both faces of it: the `BankProvider` the engine uses and
 * the `SandboxBank` controls.
 */
export const make = Effect.gen(function* () {
  const ref = yield* SynchronizedRef.make(emptyState())
  /**
   * Transfers in, with when they were booked (the statement, mutated in place). Apart from `ref`:
   * booking and reading it are single synchronous steps, so the faucet's path takes no lock.
   */
  const received = Statement.empty()
  /** Transfer ids issued so far: the first part of the next id, unique in this bank. */
  let sequence = 0
  /**
   * The next transfer id, `SBX-` and hex digits: this bank's sequence number (unique here without
   * remembering earlier ids) and 64 random bits (unique across restarts and instances), then, for a
   * transfer in, `seal`'s mark of it (how `returnTransfer` knows its own transfers). The number is
   * taken in the same synchronous step that builds the id, so it needs no lock either.
   */
  const nextTransactionId: Effect.Effect<string> = Effect.map(
    Ids.randomDigits(16, 16),
    (random) => `SBX-${(sequence++).toString(16).padStart(8, "0")}${random}`
  )
  // The statement books transfers in on real time, as a bank does: a merchant's sandbox test
  // clock moves that merchant's payments, not the bank's books (nor reconciliation's windows).
  const realTime = yield* Time.RealTime
  /**
   * A transfer in carries a mark of its id, CVU and amount under this bank's own key, so the
   * bank recognises it when asked to return it, however old, without keeping a list; another
   * instance's (or a made-up) transfer is refused.
   */
  const key = yield* Ids.randomDigits(16, 16)
  const seal = (id: string, cvu: BankAccount.Cvu, amount: Money.Money) =>
    (Hash.string(`${key}|${id}|${cvu}|${amount.currency}|${amount.minor}`) >>> 0)
      .toString(16)
      .padStart(8, "0")
  const sealed = (transfer: Bank.IncomingTransfer) => {
    const id = transfer.bank_transaction_id
    return id.length > 8 && seal(id.slice(0, -8), transfer.cvu, transfer.amount) === id.slice(-8)
  }
  const modify = <B>(f: (state: State) => Effect.Effect<readonly [B, State], Bank.BankError>) =>
    SynchronizedRef.modifyEffect(ref, f)
  const update = (f: (state: State) => State) => SynchronizedRef.update(ref, f)

  const bank: Context.Tag.Service<Bank.BankProvider> = {
    openAccount: Spans.fn("SandboxBank.openAccount")(function* (request) {
      return yield* modify((state) =>
        Effect.gen(function* () {
          const requested = request.alias
          if (requested !== undefined && aliasTaken(state, requested)) {
            return yield* bankError("alias_taken", `alias ${requested} is already in use`)
          }
          const alias = requested ?? (yield* fresh(randomAlias, (a) => aliasTaken(state, a), "alias"))
          const cvu = yield* fresh(randomCvu, (c) => state.open.has(c), "CVU")
          state.open.set(cvu, alias)
          state.aliases.set(alias, cvu)
          if (request.holder !== undefined) {
            // Typed values, drawn or given: the classes do not check them again (every creation).
            const holder = new Bank.AccountHolder({ account: cvu, ...request.holder }, true)
            state.ownHolders.set(cvu, holder).set(alias, holder)
          }
          return [new Bank.BankAccountRef({ cvu, alias }, true), state] as const
        })
      )
    }),

    changeAlias: Spans.fn("SandboxBank.changeAlias")(function* (cvu, alias) {
      return yield* modify((state) =>
        Effect.gen(function* () {
          const current = Option.fromNullable(state.open.get(cvu))
          if (Option.isNone(current)) {
            return yield* bankError("rejected", `CVU ${cvu} is not an open account`)
          }
          if (HashSet.has(state.refused, cvu)) {
            return yield* bankError("alias_change_refused", `CVU ${cvu} is too recent to change its alias`)
          }
          if (alias !== current.value && aliasTaken(state, alias)) {
            return yield* bankError("alias_taken", `alias ${alias} is already in use`)
          }
          state.open.set(cvu, alias)
          state.aliases.delete(current.value)
          state.aliases.set(alias, cvu)
          const holder = state.ownHolders.get(cvu)
          if (holder !== undefined) {
            state.ownHolders.delete(current.value)
            state.ownHolders.set(alias, holder)
          }
          return [new Bank.BankAccountRef({ cvu, alias }), state] as const
        })
      )
    }),

    releaseAccount: (cvu) =>
      update((state) => {
        const alias = state.open.get(cvu)
        if (alias !== undefined) {
          state.open.delete(cvu)
          state.aliases.delete(alias)
          state.ownHolders.delete(cvu)
          state.ownHolders.delete(alias)
        }
        return state
      }).pipe(Spans.span("SandboxBank.releaseAccount")),

    lookupHolder: Spans.fn("SandboxBank.lookupHolder")(function* (address) {
      const holder = Holders.lookup(yield* SynchronizedRef.get(ref), address)
      if (Option.isNone(holder)) {
        return yield* bankError("holder_not_found", `no account holder for ${address}`)
      }
      return holder.value
    }),

    sendTransfer: Spans.fn("SandboxBank.sendTransfer")(function* (transfer) {
      const now = yield* DateTime.now
      return yield* modify((state) =>
        Effect.gen(function* () {
          const previous = Outgoing.previous(state.outgoing, transfer.reference)
          if (Option.isSome(previous)) return [Either.right(previous.value), state] as const
          if (!BankAccount.isValidCbu(transfer.to) && !BankAccount.isValidAlias(transfer.to)) {
            return yield* bankError("rejected", `${transfer.to} is not a CVU, CBU or alias`)
          }
          if (transfer.amount.minor <= 0n) {
            return yield* bankError("rejected", "transfer amount must be positive")
          }
          const failure = Option.orElse(HashMap.get(state.failures, transfer.to), () =>
            HashMap.get(state.failures, resolve(state, transfer.to))
          )
          if (Option.isSome(failure)) {
            return yield* bankError(failure.value, `sandbox set transfers to ${transfer.to} to fail`)
          }
          const id = yield* nextTransactionId
          const booked = Outgoing.book(
            state.outgoing,
            transfer,
            Ids.BankTransactionId.make(id),
            resolve(state, transfer.to),
            now
          )
          const next: State = { ...state, outgoing: booked.next }
          // A timeout after applying: the transfer is booked (kept by the state), the answer lost.
          return [
            booked.timedOut
              ? Either.left(bankError("unavailable", "sandbox timed out after applying the transfer"))
              : Either.right(booked.answer),
            next
          ] as const
        })
      ).pipe(Effect.flatMap((answer) => answer))
    }),

    transferStatus: (reference) =>
      SynchronizedRef.modify(ref, (state) => {
        const [status, outgoing] = Outgoing.query(state.outgoing, reference)
        return [status, { ...state, outgoing }] as const
      }).pipe(Spans.span("SandboxBank.transferStatus")),

    returnTransfer: Spans.fn("SandboxBank.returnTransfer")(function* (transfer) {
      const id = transfer.bank_transaction_id
      return yield* modify((state) => {
        if (HashSet.has(state.returnedIds, id)) return Effect.succeed([undefined, state] as const)
        if (!sealed(transfer)) {
          return Effect.fail(bankError("rejected", `transfer ${id} was not received by this bank`))
        }
        const next: State = {
          ...state,
          returnedIds: HashSet.add(state.returnedIds, id),
          returned: Chunk.append(state.returned, transfer)
        }
        return Effect.succeed([undefined, next] as const)
      })
    }),

    incomingTransfers: ({ from, to }) =>
      Effect.sync(() => ({ transfers: Statement.window(received, from, to), unreadable: [] })).pipe(
        Spans.span("SandboxBank.incomingTransfers")
      )
  }

  const controls: Context.Tag.Service<SandboxBank> = {
    drawIncoming: Spans.fn("SandboxBank.drawIncoming")(function* (input) {
      const sender_cuit = input.senderCuit ?? (yield* randomCuit)
      const sender_account = input.senderAccount ?? (yield* randomCbu)
      const id = yield* nextTransactionId
      // Typed values, drawn or given: the class does not check them again (every faucet transfer).
      return new Bank.IncomingTransfer(
        {
          bank_transaction_id: Ids.BankTransactionId.make(`${id}${seal(id, input.cvu, input.amount)}`),
          cvu: input.cvu,
          amount: input.amount,
          sender_cuit,
          sender_name: input.senderName ?? DEFAULT_SENDER_NAME,
          sender_account
        },
        true
      )
    }),

    bookIncoming: (transfer) =>
      Effect.map(realTime.now, (now) => void Statement.book(received, now, transfer)).pipe(
        Spans.span("SandboxBank.bookIncoming")
      ),

    simulateIncoming: (input) =>
      Effect.tap(controls.drawIncoming(input), controls.bookIncoming).pipe(
        Spans.span("SandboxBank.simulateIncoming")
      ),

    registerHolder: (holder) =>
      Option.match(Holders.invalid(holder), {
        onNone: () => update((state) => Holders.register(state, holder)),
        onSome: Effect.dieMessage
      }),
    forgetHolder: (account) => update((state) => Holders.forget(state, account)),
    knows: (address) => Effect.map(SynchronizedRef.get(ref), (state) => Holders.known(state, address)),
    receivedBy: (account, limit) =>
      Effect.map(SynchronizedRef.get(ref), (state) => Outgoing.receivedBy(state.outgoing, account, limit)),

    refuseAliasChange: (cvu) => update((state) => ({ ...state, refused: HashSet.add(state.refused, cvu) })),
    allowAliasChange: (cvu) => update((state) => ({ ...state, refused: HashSet.remove(state.refused, cvu) })),

    failTransfersTo: (address, reason) =>
      update((state) => ({ ...state, failures: HashMap.set(state.failures, address, reason) })),
    clearFailures: (address) =>
      update((state) => ({
        ...state,
        failures: HashMap.remove(state.failures, address),
        outgoing: { ...state.outgoing, lateFailures: HashMap.remove(state.outgoing.lateFailures, address) }
      })),

    sentTransfers: Effect.map(SynchronizedRef.get(ref), (state) => Outgoing.books(state.outgoing)),
    holdTransfers: (statusQueries) =>
      update((state) => ({
        ...state,
        outgoing: { ...state.outgoing, holdQueries: Math.max(0, statusQueries) }
      })),
    timeOutTransfers: (count) =>
      update((state) => ({ ...state, outgoing: { ...state.outgoing, timeouts: Math.max(0, count) } })),
    failTransfersLate: (address, reason) =>
      update((state) => ({
        ...state,
        outgoing: {
          ...state.outgoing,
          lateFailures: HashMap.set(state.outgoing.lateFailures, address, reason)
        }
      })),
    settleTransfer: (reference, outcome) =>
      update((state) => ({ ...state, outgoing: Outgoing.settle(state.outgoing, reference, outcome) })),
    returnedTransfers: Effect.map(SynchronizedRef.get(ref), (state) => Chunk.toReadonlyArray(state.returned)),
    isOpen: (cvu) => Effect.map(SynchronizedRef.get(ref), (state) => state.open.has(cvu))
  }

  return { bank, controls }
})

/** The sandbox bank: `BankProvider` and its `SandboxBank` controls over one shared state. */
export const layer: Layer.Layer<Bank.BankProvider | SandboxBank> = Layer.effectContext(
  Effect.map(make, ({ bank, controls }) =>
    Context.make(Bank.BankProvider, bank).pipe(Context.add(SandboxBank, controls))
  )
)
