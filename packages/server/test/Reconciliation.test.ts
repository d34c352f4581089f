/**
 * Reconciliation of BIND's statement (`Reconciliation.run`) over real HTTP against the simulator:
 * the cursor and its lease on memory, SQLite and Postgres, and two server instances on one
 * database reconciling at once while BIND answers slowly: one reads the window, the other stands
 * aside, and every transfer whose notification never came is credited exactly once.
 */
import { describe, expect, it } from "@effect/vitest"
import { BindSimulator } from "@cobro/bank-bind/testing"
import {
  BankAccount,
  BankProvider,
  Ids,
  Ledger,
  Money,
  PaymentRequest,
  Payments,
  Reconciliation,
  Transfers
} from "@cobro/core"
import { ReconciliationCursor } from "@cobro/core/ports"
import { SqlReconciliationCursor } from "@cobro/sql"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { DateTime, Duration, Effect, Layer, Option, Schema } from "effect"
import { Admin, Services } from "../src/index.js"
import * as Storage from "../src/Storage.js"
import { bindEnv, configOf, type Env, provider, tempDb } from "./support.js"

const pg = await Effect.runPromise(pgAvailable)

const payer = { cuit: "20123456786", name: "Ana Gómez", cbu: BankAccount.makeCbu("0170099", "2200000123456") }

const at = (iso: string) => DateTime.unsafeMake(iso)

/** The cursor's contract on `layer`. */
const cursorContract = (layer: Layer.Layer<ReconciliationCursor.ReconciliationCursor, unknown>) =>
  Effect.gen(function* () {
    const cursors = yield* ReconciliationCursor.ReconciliationCursor
    const t0 = at("2026-01-01T00:00:00Z")
    const lease = (t: DateTime.Utc) => DateTime.addDuration(t, Duration.minutes(5))
    expect(yield* cursors.claim("bind:a", "one", t0, lease(t0))).toEqual({
      _tag: "Claimed",
      cursor: Option.none()
    })
    // Held: another owner is refused until the lease runs out; another account is free.
    expect(yield* cursors.claim("bind:a", "two", t0, lease(t0))).toEqual({ _tag: "Busy" })
    expect((yield* cursors.claim("bind:b", "two", t0, lease(t0)))._tag).toBe("Claimed")
    const t1 = at("2026-01-01T00:01:00Z")
    expect(yield* cursors.release("bind:a", "one", Option.some(t1))).toBe(true)
    expect(yield* cursors.release("bind:a", "one", Option.some(t1))).toBe(false)
    expect(yield* cursors.claim("bind:a", "two", t1, lease(t1))).toEqual({
      _tag: "Claimed",
      cursor: Option.some(t1)
    })
    // Never back.
    expect(yield* cursors.release("bind:a", "two", Option.some(t0))).toBe(true)
    const t2 = at("2026-01-01T00:02:00Z")
    expect(yield* cursors.claim("bind:a", "three", t2, lease(t2))).toEqual({
      _tag: "Claimed",
      cursor: Option.some(t1)
    })
    // Its holder died: after the lease another run takes it over, and the dead one's release fails.
    const late = at("2026-01-01T00:08:00Z")
    expect(yield* cursors.claim("bind:a", "four", t2, lease(t2))).toEqual({ _tag: "Busy" })
    expect((yield* cursors.claim("bind:a", "four", late, lease(late)))._tag).toBe("Claimed")
    expect(yield* cursors.release("bind:a", "three", Option.some(late))).toBe(false)
    expect(yield* cursors.release("bind:a", "four", Option.none())).toBe(true)
    expect(yield* cursors.claim("bind:a", "five", late, lease(late))).toEqual({
      _tag: "Claimed",
      cursor: Option.some(t1)
    })
    // The quarantine: each entry once (by id, or by body without one), the first kept, per account.
    const entry = (id: string, reason: string, t: DateTime.Utc, body = `{"id":"${id}"}`) => ({
      bank_transaction_id: id,
      reason,
      body,
      quarantined_at: t
    })
    expect(yield* cursors.quarantined("bind:a", 10)).toEqual([])
    yield* cursors.quarantine("bind:a", [
      entry("HUGE1", "amount", t1),
      entry("", "unreadable", t0, "{not json")
    ])
    yield* cursors.quarantine("bind:a", [entry("HUGE1", "again", t2), entry("BAD1", "cbu", t2)])
    yield* cursors.quarantine("bind:b", [entry("OTHER", "x", t0)])
    yield* cursors.quarantine("bind:a", [])
    expect(yield* cursors.quarantined("bind:a", 10)).toEqual([
      entry("", "unreadable", t0, "{not json"),
      entry("HUGE1", "amount", t1),
      entry("BAD1", "cbu", t2)
    ])
    expect(yield* cursors.quarantined("bind:a", 1)).toEqual([entry("", "unreadable", t0, "{not json")])
    expect(yield* cursors.quarantined("bind:b", 10)).toEqual([entry("OTHER", "x", t0)])
  }).pipe(Effect.provide(layer))

const sqlCursor = (database: string) =>
  Effect.map(configOf({ COBRO_DATABASE_URL: database }), (config) =>
    SqlReconciliationCursor.layer.pipe(Layer.provide(Storage.layer(config.database, config)))
  )

describe("ReconciliationCursor", () => {
  it.effect("memory", () => cursorContract(ReconciliationCursor.layerMemory))
  it.scopedLive("SQLite", () => Effect.flatMap(Effect.flatMap(tempDb, sqlCursor), cursorContract))
  it.scopedLive.skipIf(!pg)("Postgres", () =>
    Effect.flatMap(Effect.flatMap(freshPgUrl, sqlCursor), cursorContract)
  )
})

/** An instance's services on `env`'s database and bank. */
const instance = (env: Env) =>
  Effect.flatMap(configOf(env), (config) =>
    Layer.build(Services.layer(config)).pipe(Effect.withConfigProvider(provider(env)))
  )

/**
 * Payments whose notifications BIND never sent; two instances reconcile at once (BIND answers
 * each call 300 ms late, so the runs overlap): one reads the window, the other is `Busy`, every
 * payment is paid once, and a later run finds nothing new.
 */
const twoInstances = (database: string) =>
  Effect.gen(function* () {
    const sim = yield* BindSimulator.scoped()
    const env: Env = {
      COBRO_DATABASE_URL: database,
      ...bindEnv(sim)
    }
    const a = yield* instance(env)
    const b = yield* instance(env)
    const ids = yield* Effect.gen(function* () {
      yield* Admin.createUser({
        user_id: "recon",
        name: "Tienda recon",
        email: "recon@example.com",
        cuit: "30712345671",
        status: "ACTIVE"
      })
      const payments = yield* Payments.Payments
      const made = []
      for (const n of [1, 2, 3]) {
        const payment = yield* payments.create(
          Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
            user_id: "recon",
            external_id: `lost-${n}`,
            price: { amount: 1000 * n, currency: "ARS" },
            payment_options: ["transfer"]
          })
        )
        made.push(payment)
      }
      return made
    }).pipe(Effect.provide(a))
    sim.faults.dropNotifications = 3
    for (const [i, payment] of ids.entries())
      yield* Effect.promise(() => sim.receive({ cvu: payment.cvu, amount: 1000 * (i + 1), sender: payer }))
    // A window ends before now (`[from, to)`): let the clock move past the bookings.
    yield* Effect.sleep("10 millis")
    sim.faults.slowAnswersMillis = 300
    const run = (context: typeof a) =>
      Effect.flatMap(Reconciliation.Reconciliation, (r) => r.run()).pipe(Effect.provide(context))
    const [first, second] = yield* Effect.all([run(a), run(b)], { concurrency: 2 })
    const reports = [first, second]
    const reconciled = reports.filter((r) => r._tag === "Reconciled")
    expect(reports.filter((r) => r._tag === "Busy")).toHaveLength(1)
    expect(reconciled).toHaveLength(1)
    const report = reconciled[0]!
    expect(report._tag === "Reconciled" && report.found.map((f) => f.outcome)).toEqual([
      "credited",
      "credited",
      "credited"
    ])
    sim.faults.slowAnswersMillis = 0
    const later = yield* run(b)
    expect(later).toMatchObject({ _tag: "Reconciled", listed: 3, known: 3, found: [], advanced: true })
    yield* Effect.gen(function* () {
      const payments = yield* Payments.Payments
      for (const payment of ids) {
        const now = yield* payments.get(payment.user_id, payment.id)
        expect(now.payment_status).toBe("SUCCESS")
      }
      const verified = yield* Effect.flatMap(Ledger.Ledger, (l) => l.verify())
      expect(verified.problems).toEqual([])
    }).pipe(Effect.provide(a))
  })

describe("two instances reconciling at once", () => {
  it.scopedLive("SQLite", () => Effect.flatMap(tempDb, twoInstances), { timeout: 60_000 })
  it.scopedLive.skipIf(!pg)("Postgres", () => Effect.flatMap(freshPgUrl, twoInstances), { timeout: 60_000 })
})

/**
 * The other way: a run over a normal window reports nothing missing; a credit in our books that
 * BIND's statement does not hold (injected past BIND's confirmation) is reported by the next run.
 */
const missingAtBank = (database: string) =>
  Effect.gen(function* () {
    const sim = yield* BindSimulator.scoped()
    const env: Env = {
      COBRO_DATABASE_URL: database,
      ...bindEnv(sim)
    }
    yield* Effect.gen(function* () {
      yield* Admin.createUser({
        user_id: "books",
        name: "Tienda books",
        email: "books@example.com",
        cuit: "30712345671",
        status: "ACTIVE"
      })
      const payments = yield* Payments.Payments
      const create = (external_id: string) =>
        payments.create(
          Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
            user_id: "books",
            external_id,
            price: { amount: 1000, currency: "ARS" },
            payment_options: ["transfer"]
          })
        )
      const paid = yield* create("paid")
      // Credited as BIND sends it: booked at BIND, notified, confirmed.
      const reconciliation = yield* Reconciliation.Reconciliation
      sim.faults.dropNotifications = 1
      yield* Effect.promise(() => sim.receive({ cvu: paid.cvu, amount: 1000, sender: payer }))
      yield* Effect.sleep("10 millis")
      const normal = yield* reconciliation.run()
      expect(normal).toMatchObject({ _tag: "Reconciled", listed: 1, missing_at_bank: [] })
      // A credit our books hold that BIND never booked (what a forged notification did before
      // notifications were confirmed with BIND).
      const forged = yield* create("forged")
      const transfers = yield* Transfers.Transfers
      yield* transfers.ingest(
        new BankProvider.IncomingTransfer({
          bank_transaction_id: Ids.BankTransactionId.make("FORGED000000000001"),
          cvu: forged.cvu,
          amount: Money.make(100000n, "ARS"),
          sender_cuit: BankAccount.Cuit.make(payer.cuit),
          sender_name: payer.name,
          sender_account: payer.cbu
        })
      )
      yield* Effect.sleep("10 millis")
      const next = yield* reconciliation.run()
      expect(next._tag === "Reconciled" && next.missing_at_bank).toEqual([
        expect.objectContaining({
          bank_transaction_id: "FORGED000000000001",
          cvu: forged.cvu,
          amount: Money.make(100000n, "ARS"),
          target: "payment",
          target_id: forged.id
        })
      ])
      expect(next).toMatchObject({ listed: 1, known: 1, found: [] })
    }).pipe(Effect.provide(yield* instance(env)))
  })

describe("reconciliation the other way: credits in our books that BIND does not hold", () => {
  it.scopedLive("SQLite", () => Effect.flatMap(tempDb, missingAtBank), { timeout: 60_000 })
  it.scopedLive.skipIf(!pg)("Postgres", () => Effect.flatMap(freshPgUrl, missingAtBank), { timeout: 60_000 })
})
