/**
 * Outgoing transfers in flight: the repository's contract, and the engine's transfers in flight
 * over it (schedule and split payouts) against the sandbox bank's faults: pending for a number
 * of status queries, failed after acceptance, timed out after applying. Every transfer appears
 * once in the bank's books, is settled once, and the ledger balances.
 */
import { expect } from "@effect/vitest"
import {
  Ledger,
  LedgerAccount,
  Money,
  Outbox,
  OutgoingTransfer,
  OutgoingTransfers,
  Schedules
} from "@cobro/core"
import { OutgoingTransferRepository } from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Effect, Option, TestClock } from "effect"
import type { Scenario } from "../Scenario.js"
import { books, checkLater, expectLedgerOk, runDue } from "./fixtures.js"
import {
  asPartner,
  asUser,
  balances,
  createReq,
  fund,
  ownCbu,
  p1,
  setup,
  toNextRun
} from "./schedules/helpers.js"
import { HOLD, instructedSplit, read } from "./splits/helpers.js"

const transfer = (reference: string, purpose: OutgoingTransfer.TransferPurpose, at: DateTime.Utc) =>
  new OutgoingTransfer.OutgoingTransfer({
    reference,
    purpose,
    owner_id: `owner_${reference}`,
    destination: ownCbu,
    // Past 2^53: the amount must come back exact.
    amount: Money.make(9_007_199_254_740_993n, "ARS"),
    in_transit: LedgerAccount.merchantInTransit("u1"),
    return_to: LedgerAccount.merchantAvailable("u1"),
    ...OutgoingTransfer.firstSend(),
    next_check_at: at,
    creation_timestamp: at,
    last_modified_timestamp: at
  })

/** A schedule with its payout due now, over a funded account. */
const dueSchedule = Effect.gen(function* () {
  yield* setup
  yield* fund("o-1", 100000n)
  const schedules = yield* Schedules.Schedules
  const s = yield* schedules.create(asPartner(p1), createReq("daily"))
  const { available } = yield* balances
  yield* toNextRun(s.schedule_id)
  return { schedule: s, available, schedules }
})

export const outgoingScenarios: ReadonlyArray<Scenario> = [
  {
    name: "outgoing transfers: listed for operators by state, oldest first, a page after a reference",
    run: Effect.gen(function* () {
      const repo = yield* OutgoingTransferRepository.OutgoingTransferRepository
      const t0 = DateTime.unsafeMake(Date.UTC(2026, 0, 28, 15, 0))
      const later = DateTime.addDuration(t0, "1 minute")
      const at = (reference: string, when: DateTime.Utc, status: OutgoingTransfer.TransferState) =>
        new OutgoingTransfer.OutgoingTransfer({
          ...transfer(reference, "schedule_payout", when),
          status,
          creation_timestamp: when
        })
      // Inserted out of order: the list orders by creation, then reference.
      yield* repo.insert(at("po_z", later, "PENDING"))
      yield* repo.insert(at("po_b", t0, "SENDING"))
      yield* repo.insert(at("po_a", t0, "COMPLETED"))
      yield* repo.insert(
        new OutgoingTransfer.OutgoingTransfer({ ...at("sp_1", t0, "FAILED"), purpose: "split_payout" })
      )
      const list = (states: ReadonlyArray<OutgoingTransfer.TransferState>, after?: string, limit = 10) =>
        Effect.map(repo.list({ states, after: Option.fromNullable(after), limit }), (ts) =>
          ts.map((t) => t.reference)
        )
      expect(yield* list(OutgoingTransfer.inFlightStates)).toEqual(["po_b", "po_z"])
      expect(yield* list(["SENDING", "PENDING", "COMPLETED", "FAILED"])).toEqual([
        "po_a",
        "po_b",
        "sp_1",
        "po_z"
      ])
      expect(yield* list(["FAILED"])).toEqual(["sp_1"])
      expect(yield* list([])).toEqual([])
      expect(yield* list(["SENDING", "PENDING", "COMPLETED", "FAILED"], undefined, 2)).toEqual([
        "po_a",
        "po_b"
      ])
      expect(yield* list(["SENDING", "PENDING", "COMPLETED", "FAILED"], "po_b", 2)).toEqual(["sp_1", "po_z"])
      // After a settled one, only the states asked for.
      expect(yield* list(OutgoingTransfer.inFlightStates, "po_a")).toEqual(["po_b", "po_z"])
      expect(yield* list(OutgoingTransfer.inFlightStates, "po_z")).toEqual([])
      expect(yield* list(OutgoingTransfer.inFlightStates, "po_unknown")).toEqual([])
      // The amount past 2^53 comes back exact.
      const [first] = yield* repo.list({ states: ["SENDING"], after: Option.none(), limit: 1 })
      expect(first).toEqual(at("po_b", t0, "SENDING"))
    })
  },
  {
    name: "outgoing transfers: stored exactly, one per reference, due by purpose in check order",
    run: Effect.gen(function* () {
      const repo = yield* OutgoingTransferRepository.OutgoingTransferRepository
      const t0 = DateTime.unsafeMake(Date.UTC(2026, 0, 28, 15, 0))
      const later = DateTime.addDuration(t0, "1 minute")
      const a = transfer("po_b", "schedule_payout", t0)
      const b = transfer("po_a", "schedule_payout", t0)
      const c = transfer("po_c", "schedule_payout", later)
      const d = transfer("sp_1", "split_payout", t0)
      for (const t of [a, b, c, d]) yield* repo.insert(t)
      expect((yield* Effect.flip(repo.insert(a))).key).toBe("outgoing_transfer.reference.taken")
      expect(yield* repo.findByReference("po_b")).toEqual(Option.some(a))
      expect(yield* repo.findByReference("po_none")).toEqual(Option.none())
      const due = (now: DateTime.Utc) =>
        Effect.map(repo.findDue("schedule_payout", now, 10), (ts) => ts.map((t) => t.reference))
      expect(yield* due(t0)).toEqual(["po_a", "po_b"])
      expect(yield* due(later)).toEqual(["po_a", "po_b", "po_c"])
      expect((yield* repo.findDue("schedule_payout", later, 1)).map((t) => t.reference)).toEqual(["po_a"])
      expect((yield* repo.findDue("split_payout", later, 10)).map((t) => t.reference)).toEqual(["sp_1"])
      // Settled ones leave the due list; a pending one stays, at its next check.
      const settled = new OutgoingTransfer.OutgoingTransfer({
        ...b,
        status: "COMPLETED",
        last_modified_timestamp: later
      })
      yield* repo.update(settled)
      yield* repo.update(
        new OutgoingTransfer.OutgoingTransfer({ ...a, status: "PENDING", next_check_at: later })
      )
      expect(yield* due(t0)).toEqual([])
      expect(yield* due(later)).toEqual(["po_b", "po_c"])
      expect(yield* repo.findByReferenceForUpdate("po_b")).toEqual(
        Option.some(new OutgoingTransfer.OutgoingTransfer({ ...a, status: "PENDING", next_check_at: later }))
      )
      expect(yield* repo.findByReference("po_a")).toEqual(Option.some(settled))
    })
  },
  {
    name: "outgoing transfers: a payout pending at the bank is asked about until it completes, settled once",
    run: Effect.gen(function* () {
      const { schedule, available, schedules } = yield* dueSchedule
      const bank = yield* SandboxBank.SandboxBank
      const repo = yield* OutgoingTransferRepository.OutgoingTransferRepository
      yield* bank.holdTransfers(1)
      expect((yield* runDue).payouts).toMatchObject({ runs: 1, sent: 0, retrying: 1 })
      const [payout] = yield* schedules.payouts(asUser(), schedule.schedule_id)
      expect(payout).toMatchObject({ payout_status: "PENDING" })
      const inFlight = Option.getOrThrow(yield* repo.findByReference(payout!.payout_id))
      expect(inFlight).toMatchObject({ status: "PENDING", purpose: "schedule_payout", sends: 1 })
      expect(inFlight.bank_transaction_id).not.toBeNull()
      expect(yield* balances).toEqual({ available: 0n, inTransit: available })
      // Not asked again before the interval; then pending once more; then completed.
      expect((yield* runDue).payouts).toMatchObject({ sent: 0, retrying: 0 })
      yield* checkLater
      expect((yield* runDue).payouts).toMatchObject({ sent: 0, retrying: 1 })
      yield* checkLater
      const reports = yield* Effect.all([runDue, runDue], { concurrency: "unbounded" })
      expect(reports.reduce((n, r) => n + r.payouts.sent, 0)).toBe(1)
      const [done] = yield* schedules.payouts(asUser(), schedule.schedule_id)
      expect(done).toMatchObject({
        payout_status: "SUCCESS",
        bank_transaction_id: inFlight.bank_transaction_id,
        attempts: 1
      })
      expect(Option.getOrThrow(yield* repo.findByReference(payout!.payout_id)).status).toBe("COMPLETED")
      expect((yield* books).map((t) => [t.reference, t.status])).toEqual([[payout!.payout_id, "completed"]])
      expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
      yield* checkLater
      expect((yield* runDue).payouts).toMatchObject({ sent: 0, failed: 0, retrying: 0 })
      yield* expectLedgerOk
    })
  },
  {
    name: "outgoing transfers: a transfer the bank reports final is settled at once by its status query, once",
    run: Effect.gen(function* () {
      const { schedule, schedules } = yield* dueSchedule
      const bank = yield* SandboxBank.SandboxBank
      const outgoing = yield* OutgoingTransfers.OutgoingTransfers
      yield* bank.holdTransfers(1)
      expect((yield* runDue).payouts).toMatchObject({ retrying: 1 })
      const [payout] = yield* schedules.payouts(asUser(), schedule.schedule_id)
      const reported = (reference: string) => outgoing.settleReported((t) => t.reference === reference)
      // Nothing of ours matches: nothing happens.
      expect(yield* outgoing.settleReported(() => false)).toEqual(Option.none())
      // The claim comes before the bank's query says it is final: still pending.
      expect(Option.map(yield* reported(payout!.payout_id), (r) => r.step)).toEqual(Option.some("pending"))
      expect((yield* schedules.payouts(asUser(), schedule.schedule_id))[0]).toMatchObject({
        payout_status: "PENDING"
      })
      // Final at the bank: settled now, before any check is due; a repeat finds nothing in flight.
      expect(yield* reported(payout!.payout_id)).toEqual(
        Option.some({
          reference: payout!.payout_id,
          purpose: "schedule_payout",
          step: "completed",
          finished: true
        })
      )
      expect((yield* schedules.payouts(asUser(), schedule.schedule_id))[0]).toMatchObject({
        payout_status: "SUCCESS"
      })
      expect(yield* reported(payout!.payout_id)).toEqual(Option.none())
      yield* checkLater
      expect((yield* runDue).payouts).toMatchObject({ sent: 0, failed: 0, retrying: 0 })
      expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
      yield* expectLedgerOk
    })
  },
  {
    name: "outgoing transfers: a payout failed after acceptance returns its money and writes payout.failed",
    run: Effect.gen(function* () {
      const { schedule, available, schedules } = yield* dueSchedule
      const bank = yield* SandboxBank.SandboxBank
      yield* bank.failTransfersLate(ownCbu, "cuenta destino cerrada")
      expect((yield* runDue).payouts).toMatchObject({ runs: 1, retrying: 1 })
      expect(yield* balances).toEqual({ available: 0n, inTransit: available })
      yield* checkLater
      expect((yield* runDue).payouts).toMatchObject({ failed: 1 })
      const [failed] = yield* schedules.payouts(asUser(), schedule.schedule_id)
      expect(failed).toMatchObject({ payout_status: "FAILED" })
      expect(failed!.error).toContain("cuenta destino cerrada")
      expect(yield* balances).toEqual({ available, inTransit: 0n })
      const outbox = yield* Outbox.Outbox
      const events = (yield* outbox.list(0, 100))
        .map((e) => e.event)
        .filter((e) => e.type === "payout.failed")
      expect(events).toHaveLength(1)
      expect(events[0]!.partner_id).toBe(p1)
      expect(events[0]!.payload).toMatchObject({
        message: "payout.failed",
        payout_id: failed!.payout_id,
        schedule_id: schedule.schedule_id,
        amount: Money.format(failed!.amount),
        reason: failed!.error
      })
      expect((yield* books).map((t) => t.status)).toEqual(["failed"])
      // Checked again later: nothing moves twice.
      yield* checkLater
      yield* runDue
      expect(yield* balances).toEqual({ available, inTransit: 0n })
      yield* expectLedgerOk
    })
  },
  {
    name: "outgoing transfers: a send timed out after the bank applied it is found by status, never resent",
    run: Effect.gen(function* () {
      const { schedule, available, schedules } = yield* dueSchedule
      const bank = yield* SandboxBank.SandboxBank
      const repo = yield* OutgoingTransferRepository.OutgoingTransferRepository
      yield* bank.timeOutTransfers(1)
      expect((yield* runDue).payouts).toMatchObject({ runs: 1, retrying: 1 })
      const [payout] = yield* schedules.payouts(asUser(), schedule.schedule_id)
      expect(payout).toMatchObject({ payout_status: "PENDING" })
      const unknown = Option.getOrThrow(yield* repo.findByReference(payout!.payout_id))
      expect(unknown).toMatchObject({ status: "SENDING" })
      expect(unknown.last_error).toContain("unavailable")
      expect(yield* balances).toEqual({ available: 0n, inTransit: available })
      yield* checkLater
      expect((yield* runDue).payouts).toMatchObject({ sent: 1 })
      expect(Option.getOrThrow(yield* repo.findByReference(payout!.payout_id))).toMatchObject({
        status: "COMPLETED",
        sends: 1,
        checks: 1
      })
      expect(yield* books).toHaveLength(1)
      expect(yield* balances).toEqual({ available: 0n, inTransit: 0n })
      yield* expectLedgerOk
    })
  },
  {
    name: "outgoing transfers: split payouts pending at the bank, one failing late, end PARTIAL_FAILURE once",
    run: Effect.gen(function* () {
      const bank = yield* SandboxBank.SandboxBank
      yield* bank.holdTransfers(1)
      const { id, b } = yield* instructedSplit()
      yield* bank.failTransfersLate(b, "cuenta destino inhabilitada")
      const ledger = yield* Ledger.Ledger
      const split = Effect.all({
        available: Effect.map(ledger.balance(LedgerAccount.splitBalance(id)), (m) => m.minor),
        held: Effect.map(ledger.balance(LedgerAccount.splitHeld(id)), (m) => m.minor)
      })
      const before = yield* split
      yield* TestClock.adjust(HOLD)
      expect((yield* runDue).splits).toEqual({ finished: 0, sent: 0, payouts_failed: 0, failed: 0 })
      const midway = yield* read(id)
      expect(midway.payout_status).toBe("PROCESSING")
      expect(midway.payouts.map((p) => p.status)).toEqual(["PENDING", "PENDING"])
      expect(yield* split).toEqual(before)
      // Asked once: still pending; asked again: one completes, the other fails late.
      yield* checkLater
      expect((yield* runDue).splits).toEqual({ finished: 0, sent: 0, payouts_failed: 0, failed: 0 })
      yield* checkLater
      const reports = yield* Effect.all([runDue, runDue], { concurrency: "unbounded" })
      expect(reports.map((r) => r.splits).reduce((n, r) => n + r.finished, 0)).toBe(1)
      const done = yield* read(id)
      expect(done.payout_status).toBe("PARTIAL_FAILURE")
      expect(done.payouts.map((p) => p.status)).toEqual(["SUCCESS", "FAILED"])
      expect(done.payouts[1]!.failure_reason).toContain("cuenta destino inhabilitada")
      expect(yield* split).toEqual({ available: before.available + done.payouts[1]!.amount.minor, held: 0n })
      const outbox = yield* Outbox.Outbox
      const results = (yield* outbox.list(0, 100)).filter((e) => e.event.type === "split.payouts_result")
      expect(results).toHaveLength(1)
      expect((yield* books).map((t) => t.status)).toEqual(["completed", "failed"])
      yield* expectLedgerOk
    })
  }
]
