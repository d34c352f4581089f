/** The records, requests and engine actions the payout schedules scenarios share. */
import {
  BankAccount,
  Ids,
  Ledger,
  LedgerAccount,
  Payments,
  Principal,
  Schedule,
  Schedules,
  Transfers
} from "@cobro/core"
import { SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Effect, Schema, TestClock } from "effect"
import type { EngineContext } from "../../Scenario.js"
import { ars, createRequest, seedUser, u1 } from "../fixtures.js"

export const p1 = Ids.PartnerId.make("p1")
export const p2 = Ids.PartnerId.make("p2")
export const asPartner = (partner_id: Ids.PartnerId, user_id: Ids.UserId = u1) =>
  Principal.Principal.Partner({ user_id, partner_id })
export const asUser = (user_id: Ids.UserId = u1) => Principal.Principal.User({ user_id })

/** The merchant's own bank account (the fixtures' CUIT), known by CBU and alias. */
export const merchantCuit = BankAccount.makeCuit("30", "71234567")
export const ownCbu = BankAccount.makeCbu("2850590", "0000000012345")
export const ownAlias = "tienda.uno.banco"
export const address = (s: string) => BankAccount.PayoutAddress.make(s)

/** Wednesday 2026-01-28 12:00 in Buenos Aires. */
export const start = Date.UTC(2026, 0, 28, 15, 0)

export const at = (ms: number) => DateTime.unsafeMake(ms)
export const ids = (rows: ReadonlyArray<{ readonly schedule_id: string }>) => rows.map((r) => r.schedule_id)
export const payoutIds = (rows: ReadonlyArray<Schedule.Payout>) => rows.map((r) => r.payout_id)

/** The merchant u1 at the schedules' start time, with its own bank account known to the bank. */
export const setup: Effect.Effect<void, unknown, EngineContext> = Effect.gen(function* () {
  yield* TestClock.setTime(start)
  yield* seedUser()
  const bank = yield* SandboxBank.SandboxBank
  yield* bank.registerHolder({ account: ownCbu, alias: ownAlias, cuit: merchantCuit, name: "Tienda Uno SA" })
})

export const createReq = (frequency: string, to: string = ownCbu) =>
  Schema.decodeUnknownSync(Schedule.CreateScheduleRequest)({
    schedule_type: "payout",
    frequency,
    payload: { address: to }
  })
/** Puts money in the merchant's available balance: a payment paid by transfer. */
export const fund = (external_id: string, minor: bigint): Effect.Effect<void, unknown, EngineContext> =>
  Effect.gen(function* () {
    const payment = yield* (yield* Payments.Payments).create(
      createRequest({ external_id, price: { amount: Number(minor) / 100, currency: "ARS" } })
    )
    const transfer = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
      cvu: payment.cvu,
      amount: ars(minor)
    })
    yield* (yield* Transfers.Transfers).ingest(transfer)
  })

export const balances = Effect.gen(function* () {
  const ledger = yield* Ledger.Ledger
  return {
    available: (yield* ledger.balance(LedgerAccount.merchantAvailable(u1))).minor,
    inTransit: (yield* ledger.balance(LedgerAccount.merchantInTransit(u1))).minor
  }
})

export const reload = (id: Ids.ScheduleId): Effect.Effect<Schedule.PayoutSchedule, unknown, EngineContext> =>
  Effect.flatMap(Schedules.Schedules, (s) => s.get(asUser(), id))
export const toNextRun = (id: Ids.ScheduleId): Effect.Effect<void, unknown, EngineContext> =>
  Effect.flatMap(reload(id), (s) => TestClock.setTime(DateTime.toEpochMillis(s.next_run_date)))
