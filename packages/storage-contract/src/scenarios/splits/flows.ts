/** Split payments: the engine flows over the repository. */
import { expect } from "@effect/vitest"
import { Ids, Ledger, LedgerAccount, Money, Outbox, Split, Splits, Transfers } from "@cobro/core"
import { OutgoingTransferRepository, SplitRepository } from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Duration, Effect, Option, TestClock } from "effect"
import type { Scenario } from "../../Scenario.js"
import { ars, books, expectLedgerOk, runDue, seedUser } from "../fixtures.js"
import {
  T0,
  HOLD,
  at,
  asU1,
  createSplit,
  read,
  registerPayee,
  accountInputs,
  codeFor,
  verify,
  instruct,
  fund,
  instructedSplit
} from "./helpers.js"

const events = Effect.map(
  Effect.flatMap(Outbox.Outbox, (o) => o.list(0, 100_000)),
  (rows) => rows.map((r) => r.event)
)

const resultEvents = Effect.map(events, (all) => all.filter((e) => e.type === "split.payouts_result"))

/** The split's available and held balances in the ledger, in minor units. */
const balances = (id: Ids.SplitPaymentId) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger.Ledger
    const available = yield* ledger.balance(LedgerAccount.splitBalance(id))
    const held = yield* ledger.balance(LedgerAccount.splitHeld(id))
    return { available: available.minor, held: held.minor }
  })

const runConcurrently = (n: number) =>
  Effect.map(
    Effect.all(
      Array.from({ length: n }, () => runDue),
      { concurrency: "unbounded" }
    ),
    (reports) => {
      const total = (k: keyof Split.SplitRunReport) => reports.reduce((acc, r) => acc + r.splits[k], 0)
      return {
        finished: total("finished"),
        sent: total("sent"),
        payouts_failed: total("payouts_failed"),
        failed: total("failed")
      }
    }
  )

export const splitFlowScenarios: ReadonlyArray<Scenario> = [
  {
    name: "splits flow: create, fund, verify accounts, instruct; after the 12 h hold concurrent runs pay each payout once",
    run: Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      yield* seedUser()
      const splits = yield* Splits.Splits
      const repo = yield* SplitRepository.SplitRepository

      // Concurrent identical creates answer one split; repeating it too.
      const created = yield* Effect.all(
        [createSplit("order-1"), createSplit("order-1"), createSplit("order-1")],
        {
          concurrency: "unbounded"
        }
      )
      const split = created[0]!
      const id = split.split_payment_id
      expect(created.map((s) => s.split_payment_id)).toEqual([id, id, id])
      expect((yield* createSplit("order-1")).cvu).toBe(split.cvu)
      expect(yield* (yield* SandboxBank.SandboxBank).isOpen(split.cvu)).toBe(true)
      expect(Option.getOrThrow(yield* splits.findByCvu(split.cvu)).split_payment_id).toBe(id)

      yield* fund(split.cvu)
      const funded = yield* read(id)
      expect(funded.payment_status).toBe("RECEIVED")
      expect(funded.amount_received).toEqual(ars(100000n))
      expect(funded.amount_credited).toEqual(ars(98790n))
      expect(funded.balance).toEqual(ars(98790n))

      // One request, one code for both accounts; a wrong code is counted first.
      const a = yield* registerPayee(1, "Ana Proveedora")
      const b = yield* registerPayee(2, "Beto Logistica")
      const request = yield* splits.createAccounts(asU1, accountInputs(a, b))
      const right = yield* codeFor(request.request_id)
      expect(
        yield* Effect.flip(verify(request.request_id, right === "000000" ? "111111" : "000000"))
      ).toMatchObject({
        key: "verification.code.invalid"
      })
      expect(Option.getOrThrow(yield* repo.findRequest(request.request_id)).attempts).toBe(1)
      const verified = yield* verify(request.request_id, right)
      expect(verified.status).toBe("VERIFIED")
      expect(verified.attempts_left).toBe(Split.maxVerificationAttempts - 1)
      const [accountA, accountB] = verified.accounts
      expect([accountA!.bank_account, accountB!.bank_account]).toEqual([a, b])
      // Created in the same millisecond: listed by id.
      const listed = yield* splits.listAccounts(asU1)
      expect(listed).toEqual([...verified.accounts].sort((x, y) => (x.account_id < y.account_id ? -1 : 1)))
      expect(listed.map((x) => x.status)).toEqual(["ACTIVE", "ACTIVE"])

      const held = yield* instruct(id, [
        { account_id: accountA!.account_id, amount: 500 },
        { account_id: accountB!.account_id, amount: 400 }
      ])
      expect(held.payout_status).toBe("ON_HOLD")
      expect(DateTime.toEpochMillis(held.hold_until!)).toBe(T0 + HOLD)
      expect(yield* read(id)).toEqual(held)
      expect(yield* balances(id)).toEqual({ available: 8790n, held: 90000n })
      // Money arriving after the instruction goes back to its sender.
      const late = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
        cvu: split.cvu,
        amount: ars(5000n)
      })
      expect((yield* (yield* Transfers.Transfers).ingest(late))._tag).toBe("Bounced")

      yield* TestClock.adjust(HOLD - 1)
      expect(yield* runConcurrently(3)).toEqual({ finished: 0, sent: 0, payouts_failed: 0, failed: 0 })
      expect(yield* books).toEqual([])
      yield* TestClock.adjust(1)
      expect(yield* runConcurrently(3)).toEqual({ finished: 1, sent: 2, payouts_failed: 0, failed: 0 })

      const out = yield* books
      expect(out.map((t) => [t.to, Money.format(t.amount)])).toEqual([
        [accountA!.bank_account, "500.00"],
        [accountB!.bank_account, "400.00"]
      ])
      const done = yield* read(id)
      expect(done.payout_status).toBe("SUCCESS")
      expect(done.payouts.map((p) => p.status)).toEqual(["SUCCESS", "SUCCESS"])
      expect(done.payouts.map((p) => p.payout_id)).toEqual(out.map((t) => t.reference))
      expect(done.payouts.map((p) => p.bank_transaction_id)).toEqual(out.map((t) => t.bank_transaction_id))
      expect(yield* balances(id)).toEqual({ available: 8790n, held: 0n })
      expect((yield* resultEvents).map((e) => e.payload)).toEqual([
        {
          message: "split.payouts_result",
          split_payment_id: id,
          external_id: "order-1",
          payout_status: "SUCCESS"
        }
      ])
      expect(yield* repo.findDue(at(T0 + 2 * HOLD), 10)).toEqual([])
      expect((yield* runDue).splits.finished).toBe(0)
      expect(yield* books).toHaveLength(2)
      yield* expectLedgerOk
    })
  },
  {
    name: "splits flow: a rejected payout ends PARTIAL_FAILURE with its amount back in the split's balance",
    run: Effect.gen(function* () {
      const { b, id } = yield* instructedSplit("rejected")
      yield* TestClock.adjust(HOLD)
      expect(yield* runConcurrently(3)).toEqual({ finished: 1, sent: 1, payouts_failed: 1, failed: 0 })
      const done = yield* read(id)
      expect(done.payout_status).toBe("PARTIAL_FAILURE")
      expect(done.payouts.map((p) => p.status)).toEqual(["SUCCESS", "FAILED"])
      expect(done.payouts[1]!.failure_reason).not.toBeNull()
      expect(done.balance).toEqual(ars(48790n))
      expect(yield* balances(id)).toEqual({ available: 48790n, held: 0n })
      expect((yield* books).map((t) => Money.format(t.amount))).toEqual(["500.00"])
      expect((yield* books).some((t) => t.to === b)).toBe(false)
      expect((yield* resultEvents).map((e) => e.payload["payout_status"])).toEqual(["PARTIAL_FAILURE"])
      expect(
        yield* Effect.flip(instruct(id, [{ account_id: done.payouts[0]!.account_id, amount: 1 }]))
      ).toMatchObject({ key: "split.payouts.already_instructed" })
      yield* expectLedgerOk
    })
  },
  {
    name: "splits flow: a bank outage leaves the split PROCESSING; concurrent runs settle the transfer in flight once",
    run: Effect.gen(function* () {
      const { b, id } = yield* instructedSplit("unavailable")
      const repo = yield* SplitRepository.SplitRepository
      const transfers = yield* OutgoingTransferRepository.OutgoingTransferRepository
      yield* TestClock.adjust(HOLD)
      expect((yield* runDue).splits).toEqual({ finished: 0, sent: 1, payouts_failed: 0, failed: 1 })
      const midway = yield* read(id)
      expect(midway.payout_status).toBe("PROCESSING")
      expect(midway.payouts.map((p) => p.status)).toEqual(["SUCCESS", "PENDING"])
      expect(yield* balances(id)).toEqual({ available: 8790n, held: 40000n })
      // The split is not claimed again: its payout is a transfer in flight, checked after the interval.
      const checkAt = T0 + HOLD + Duration.toMillis(Split.executionLease)
      expect(yield* repo.findDue(at(checkAt + 86_400_000), 10)).toEqual([])
      const inFlight = yield* transfers.findDue("split_payout", at(checkAt), 10)
      expect(inFlight.map((t) => [t.reference, t.status, t.owner_id])).toEqual([
        [midway.payouts[1]!.payout_id, "SENDING", id]
      ])

      yield* (yield* SandboxBank.SandboxBank).clearFailures(b)
      expect((yield* runDue).splits.sent).toBe(0)
      yield* TestClock.adjust(Split.executionLease)
      expect(yield* runConcurrently(3)).toEqual({ finished: 1, sent: 1, payouts_failed: 0, failed: 0 })
      expect((yield* read(id)).payout_status).toBe("SUCCESS")
      expect(yield* books).toHaveLength(2)
      expect(yield* balances(id)).toEqual({ available: 8790n, held: 0n })
      expect(yield* resultEvents).toHaveLength(1)
      yield* expectLedgerOk
    })
  }
]
