/**
 * Reconciliation: reads the bank's statement of the collecting account for a window and ingests
 * every transfer in it through `Transfers.ingestAll`, so that a transfer whose notification never
 * came (or came malformed) is credited all the same, and one already notified is a `Duplicate`
 * (credited once: the transfer log's key). Each run reads from where the last one ended, minus
 * `overlap` (a bank books some transfers late, with an earlier date), to now; the cursor lives in
 * storage (`ReconciliationCursor`) under a lease, so that of several instances one reads a window
 * at a time, and it only moves once every transfer of the window was ingested or quarantined.
 *
 * One bad entry never blocks the rest: an entry the bank's statement describes in a way that
 * cannot be read (`Statement.unreadable`), or that ingest refuses for good (`InvalidInput`: an
 * amount over the maximum, a sender it cannot take; `Conflict`: the ledger refusing it), is
 * quarantined — logged with its body, counted in `cobro_bank_quarantined`, listed in the report —
 * and the rest of the window is credited and the cursor moves on. Quarantined entries are stored
 * (`ReconciliationCursor.quarantine`): every report lists those of earlier runs too. Only a failure that trying
 * again can mend (the bank failing a return: `ProviderFailure`) keeps the cursor where it was.
 *
 * It goes both ways: a transfer our books hold (`TransferRepository.receivedBetween`) that the
 * bank's statement of the window does not is reported — `missing_at_bank` in the report, an
 * ERROR log each, `cobro_bank_missing_at_bank` — never undone (an operator looks into it). The
 * credits checked are those recorded from `from + overlap` to now: a transfer is booked by the
 * bank at most `overlap` before we record it (the assumption `overlap` already makes), so each is
 * in the statement read, and successive runs check adjoining stretches (the last run's end to now).
 */
import { Context, DateTime, Duration, Effect, Either, Layer, Metric, Option } from "effect"
import { randomDigits } from "../internal/ids.js"
import type { Money } from "../Money.js"
import { type TransferRecord, TransferRepository } from "./TransferRepository.js"
import { type IngestError, type IngestOutcome, Transfers } from "./Transfers.js"
import { BankProvider, type BankError, type IncomingTransfer } from "../bank/BankProvider.js"
import { ReconciliationCursor, type StoredQuarantine } from "./ReconciliationCursor.js"
import * as Spans from "../Spans.js"

export interface Settings {
  /** The collecting account's key in storage (one cursor each), e.g. `bind:<client id>`. */
  readonly account: string
  /** How far back of the last window's end a run starts reading. */
  readonly overlap: Duration.Duration
  /** How far back the first run (no cursor yet) reads. */
  readonly firstWindow: Duration.Duration
  /** How long a run holds the lease; another instance may take it over after this. */
  readonly lease: Duration.Duration
}

/** How many stored quarantined entries a report lists. */
export const quarantineListed = 100

export const defaults: Settings = {
  account: "default",
  overlap: Duration.minutes(15),
  firstWindow: Duration.days(1),
  lease: Duration.minutes(5)
}

/** A transfer a run found that had not been ingested before. */
export interface Found {
  readonly bank_transaction_id: string
  readonly cvu: string
  readonly amount: Money
  /** `credited`: to its payment, customer or split; `returned`: bounced to its sender. */
  readonly outcome: "credited" | "returned"
  /** The payment, customer or split payment credited. */
  readonly target_id?: string
}

/** A statement entry set aside: it cannot be booked as the bank describes it. */
export interface Quarantined {
  readonly bank_transaction_id: string
  readonly reason: string
  /** The entry as the bank described it (JSON). */
  readonly body: string
}

/** A transfer our books credited from the bank that the bank's statement does not hold. */
export interface MissingAtBank {
  readonly bank_transaction_id: string
  readonly cvu: string
  readonly amount: Money
  /** Where our books put it (`bounced`: returned to its sender). */
  readonly target: TransferRecord["target"]
  readonly target_id: string | null
  readonly received_at: DateTime.Utc
}

export type Report =
  | {
      readonly _tag: "Reconciled"
      readonly account: string
      readonly from: DateTime.Utc
      readonly to: DateTime.Utc
      /** Transfers the bank listed in the window. */
      readonly listed: number
      /** Listed and ingested before (a notification came): nothing done. */
      readonly known: number
      /** Listed and not seen before: ingested now. */
      readonly found: ReadonlyArray<Found>
      /** Transfers that could not be ingested (retried next run: the cursor stayed). */
      readonly failed: ReadonlyArray<{ readonly bank_transaction_id: string; readonly error: string }>
      /** Entries that cannot be booked: set aside for an operator, the window went on without them. */
      readonly quarantined: ReadonlyArray<Quarantined>
      /** Transfers our books recorded in the window that the bank's statement does not hold. */
      readonly missing_at_bank: ReadonlyArray<MissingAtBank>
      /** The stored quarantine: entries of this run and earlier ones, oldest first (at most `quarantineListed`). */
      readonly quarantine: ReadonlyArray<StoredQuarantine>
      /** Whether the cursor moved to `to`. */
      readonly advanced: boolean
    }
  /** Another instance is reading a window of this account now. */
  | { readonly _tag: "Busy"; readonly account: string }

/** A counter that only counts up. */
const counter = (name: string, description: string) =>
  Metric.counter(name, { description, incremental: true })

const reconciled = counter(
  "cobro_bank_reconciled",
  "Transfers reconciliation found in the bank's statement that no notification had brought"
)
const quarantinedEntries = counter(
  "cobro_bank_quarantined",
  "Statement entries reconciliation set aside because they cannot be booked"
)
const missingAtBank = counter(
  "cobro_bank_missing_at_bank",
  "Transfers our books credited from the bank that the bank's statement does not hold"
)
const reconcileFailures = counter(
  "cobro_bank_reconcile_failures",
  "Transfers of the bank's statement reconciliation could not ingest (retried next run)"
)

export class Reconciliation extends Context.Tag("@cobro/core/Reconciliation")<
  Reconciliation,
  {
    /**
     * Reads the statement from `since` (default: the cursor minus `overlap`, or `firstWindow`
     * back on a first run) to now and ingests what was not seen. With `since` later than the
     * cursor the window leaves a gap behind it, and the cursor does not move.
     */
    readonly run: (options?: {
      readonly since?: DateTime.Utc | undefined
    }) => Effect.Effect<Report, BankError>
  }
>() {}

/** A transfer as the report shows its body. */
const encodeTransfer = (t: IncomingTransfer) => ({
  bank_transaction_id: t.bank_transaction_id,
  cvu: t.cvu,
  amount: t.amount.minor.toString(),
  currency: t.amount.currency,
  sender_cuit: t.sender_cuit,
  sender_name: t.sender_name,
  sender_account: t.sender_account
})

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)

export const make = (settings: Settings) =>
  Effect.gen(function* () {
    const bank = yield* BankProvider
    const transfers = yield* Transfers
    const cursors = yield* ReconciliationCursor
    const log = yield* TransferRepository
    const { account } = settings

    const ingest = (listed: ReadonlyArray<IncomingTransfer>) =>
      Effect.map(transfers.ingestAll(listed), (outcomes) => {
        const found: Array<Found> = []
        const failed: Array<{ bank_transaction_id: string; error: string }> = []
        const quarantined: Array<Quarantined> = []
        let known = 0
        outcomes.forEach((outcome: Either.Either<IngestOutcome, IngestError>, i) => {
          const transfer = listed[i]!
          if (Either.isLeft(outcome)) {
            const entry = { bank_transaction_id: transfer.bank_transaction_id, error: describe(outcome.left) }
            if (outcome.left._tag === "ProviderFailure") failed.push(entry)
            else
              quarantined.push({
                bank_transaction_id: entry.bank_transaction_id,
                reason: entry.error,
                body: JSON.stringify(encodeTransfer(transfer))
              })
            return
          }
          const o = outcome.right
          if (o._tag === "Duplicate") known++
          else
            found.push({
              bank_transaction_id: transfer.bank_transaction_id,
              cvu: transfer.cvu,
              amount: transfer.amount,
              outcome: o._tag === "Credited" ? "credited" : "returned",
              ...(o._tag === "Credited" ? { target_id: o.target_id } : {})
            })
        })
        return { found, failed, quarantined, known }
      })

    const run = Spans.fn("Reconciliation.run")(function* (
      options: { readonly since?: DateTime.Utc | undefined } = {}
    ) {
      const now = yield* DateTime.now
      const owner = yield* randomDigits(16, 16)
      const claim = yield* cursors.claim(account, owner, now, DateTime.addDuration(now, settings.lease))
      if (claim._tag === "Busy") return { _tag: "Busy", account } satisfies Report
      const release = (to: Option.Option<DateTime.Utc>) =>
        Effect.flatMap(cursors.release(account, owner, to), (held) =>
          held
            ? Effect.void
            : Effect.logWarning("reconciliation outlived its lease; another run took it over").pipe(
                Effect.annotateLogs({ account })
              )
        )
      const cursor = claim.cursor
      const from =
        options.since ??
        Option.match(cursor, {
          onNone: () => DateTime.subtractDuration(now, settings.firstWindow),
          onSome: (c) => DateTime.subtractDuration(c, settings.overlap)
        })
      // An explicit `since` past the cursor would skip what lies between: the cursor stays.
      const continuous =
        options.since === undefined ||
        Option.isNone(cursor) ||
        DateTime.lessThanOrEqualTo(options.since, cursor.value)
      return yield* Effect.gen(function* () {
        const statement = yield* bank.incomingTransfers({ from, to: now })
        const listed = statement.transfers
        const ingested = yield* ingest(listed)
        const { found, failed, known } = ingested
        const quarantined: ReadonlyArray<Quarantined> = [...statement.unreadable, ...ingested.quarantined]
        const held = new Set<string>([
          ...listed.map((t) => t.bank_transaction_id),
          ...statement.unreadable.map((q) => q.bank_transaction_id)
        ])
        const missing_at_bank: ReadonlyArray<MissingAtBank> = (yield* log.receivedBetween(
          DateTime.addDuration(from, settings.overlap),
          now
        ))
          .filter((r) => !held.has(r.bank_transaction_id))
          .map((r) => ({
            bank_transaction_id: r.bank_transaction_id,
            cvu: r.cvu,
            amount: r.amount,
            target: r.target,
            target_id: r.target_id,
            received_at: r.received_at
          }))
        yield* cursors.quarantine(
          account,
          quarantined.map((q) => ({ ...q, quarantined_at: now }))
        )
        const quarantine = yield* cursors.quarantined(account, quarantineListed)
        const advanced = continuous && failed.length === 0
        yield* release(advanced ? Option.some(now) : Option.none())
        yield* Metric.incrementBy(reconciled, found.length)
        yield* Metric.incrementBy(reconcileFailures, failed.length)
        yield* Metric.incrementBy(quarantinedEntries, quarantined.length)
        for (const q of quarantined)
          yield* Effect.logError("reconciliation quarantined a statement entry that cannot be booked").pipe(
            Effect.annotateLogs({
              account,
              bank_transaction_id: q.bank_transaction_id,
              reason: q.reason,
              body: q.body
            })
          )
        yield* Metric.incrementBy(missingAtBank, missing_at_bank.length)
        for (const m of missing_at_bank)
          yield* Effect.logError(
            "reconciliation: a transfer our books credited from the bank is not in the bank's statement"
          ).pipe(
            Effect.annotateLogs({
              account,
              bank_transaction_id: m.bank_transaction_id,
              cvu: m.cvu,
              amount: m.amount.minor.toString(),
              target: m.target,
              target_id: m.target_id ?? "",
              received_at: DateTime.formatIso(m.received_at)
            })
          )
        if (found.length > 0)
          yield* Effect.logWarning(
            `reconciliation found ${found.length} transfer(s) no notification had brought`
          ).pipe(Effect.annotateLogs({ account, ids: found.map((f) => f.bank_transaction_id).join(",") }))
        for (const f of failed)
          yield* Effect.logError("reconciliation could not ingest a transfer; retried next run").pipe(
            Effect.annotateLogs({ account, bank_transaction_id: f.bank_transaction_id, error: f.error })
          )
        return {
          _tag: "Reconciled",
          account,
          from,
          to: now,
          listed: listed.length + statement.unreadable.length,
          known,
          found,
          failed,
          quarantined,
          missing_at_bank,
          quarantine,
          advanced
        } satisfies Report
      }).pipe(Effect.onError(() => release(Option.none())))
    })

    return Reconciliation.of({ run: (options) => run(options) })
  })

/** The reconciliation of `settings.account` over the engine's services. */
export const layer = (
  settings: Partial<Settings> = {}
): Layer.Layer<Reconciliation, never, BankProvider | Transfers | ReconciliationCursor | TransferRepository> =>
  Layer.effect(Reconciliation, make({ ...defaults, ...settings }))
