import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Option, TestClock } from "effect"
import { BankProvider, Ids, Jobs, Money, Split, Splits } from "../src/index.js"
import { SplitRepository } from "../src/ports.js"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"
import { ars, events, expectLedgerOk, seedUser } from "./fixtures.js"
import {
  activeAccounts,
  asU1,
  asU2,
  balances,
  createSplit,
  CREDITED,
  fundedSplitWithTwoAccounts,
  instruct,
  instruction,
  pay,
  registerPayee
} from "./splitFixtures.js"

const provideEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

const START = Date.UTC(2026, 10, 20, 12, 0, 0)
const HOLD = Duration.toMillis(Duration.hours(12))

const runDue = Effect.flatMap(Jobs.Jobs, (j) => j.runDue())
const sent = Effect.flatMap(SandboxBank.SandboxBank, (b) => b.sentTransfers)
const read = (id: Ids.SplitPaymentId) => Effect.flatMap(Splits.Splits, (s) => s.get(asU1, id))

describe("The payouts instruction", () => {
  it.effect(
    "moves the total to held, sets hold_until = now + 12 h and ON_HOLD; a second one is a Conflict",
    () =>
      provideEngine(
        Effect.gen(function* () {
          yield* TestClock.setTime(START)
          yield* seedUser()
          const { split, accountA, accountB } = yield* fundedSplitWithTwoAccounts
          const accepted = yield* instruct(split.split_payment_id, [
            { account_id: accountA.account_id, amount: 500 },
            { account_id: accountB.account_id, amount: 400.5 }
          ])
          expect(accepted.payout_status).toBe("ON_HOLD")
          expect(DateTime.formatIso(accepted.hold_until!)).toBe("2026-11-21T00:00:00.000Z")
          expect(accepted.payouts.map((p) => [p.account_id, Money.format(p.amount), p.status])).toEqual([
            [accountA.account_id, "500.00", "PENDING"],
            [accountB.account_id, "400.50", "PENDING"]
          ])
          expect(accepted.balance).toEqual(ars("87.40"))
          expect(yield* balances(split.split_payment_id)).toEqual({ available: 8740n, held: 90050n })
          expect(yield* read(split.split_payment_id)).toEqual(accepted)

          const second = yield* Effect.flip(
            instruct(split.split_payment_id, [{ account_id: accountA.account_id, amount: 1 }])
          )
          expect(second).toMatchObject({ _tag: "Conflict", key: "split.payouts.already_instructed" })
          expect(yield* balances(split.split_payment_id)).toEqual({ available: 8740n, held: 90050n })
          yield* expectLedgerOk
        })
      )
  )

  it.effect("rejects unverified and disabled accounts, another account's, and more than the balance", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        yield* seedUser({ user_id: Ids.UserId.make("u2"), email: "dos@example.com" })
        const { split, accountA, accountB } = yield* fundedSplitWithTwoAccounts
        const splits = yield* Splits.Splits
        const id = split.split_payment_id

        const pendingAddress = yield* registerPayee("Carla")
        const pending = (yield* splits.createAccounts(asU1, [
          { address: pendingAddress } as Split.PayoutAccountInput
        ])).accounts[0]!
        expect(
          yield* Effect.flip(instruct(id, [{ account_id: pending.account_id, amount: 10 }]))
        ).toMatchObject({
          _tag: "Conflict",
          key: "payout_account.not.active"
        })

        yield* splits.disableAccount(asU1, accountB.account_id)
        expect(
          yield* Effect.flip(
            instruct(id, [
              { account_id: accountA.account_id, amount: 10 },
              { account_id: accountB.account_id, amount: 10 }
            ])
          )
        ).toMatchObject({ _tag: "Conflict", key: "payout_account.not.active" })

        expect(yield* Effect.flip(instruct(id, [{ account_id: "pacc_nope", amount: 10 }]))).toMatchObject({
          _tag: "NotFound",
          key: "payout_account.not.found"
        })
        expect(
          yield* Effect.flip(instruct(id, [{ account_id: accountA.account_id, amount: 10 }], asU2))
        ).toMatchObject({ _tag: "NotFound", key: "split_payment.not.found" })
        expect(
          yield* Effect.flip(
            instruct(id, [
              { account_id: accountA.account_id, amount: 5 },
              { account_id: accountA.account_id, amount: 5 }
            ])
          )
        ).toMatchObject({ _tag: "InvalidInput", field: "payouts[1].account_id" })

        expect(
          yield* Effect.flip(instruct(id, [{ account_id: accountA.account_id, amount: 987.91 }]))
        ).toMatchObject({
          _tag: "Conflict",
          key: "split.balance.insufficient"
        })
        expect(() => instruction([])).toThrow()
        expect(() => instruction([{ account_id: accountA.account_id, amount: 0 }])).toThrow()
        expect(() => instruction([{ account_id: accountA.account_id, amount: 1.001 }])).toThrow()

        // Nothing was accepted: the whole balance is still available and the split is untouched.
        const after = yield* read(id)
        expect(after.payout_status).toBeNull()
        expect(after.hold_until).toBeNull()
        expect(yield* balances(id)).toEqual({ available: ars(CREDITED).minor, held: 0n })

        // The exact balance is accepted.
        const accepted = yield* instruct(id, [{ account_id: accountA.account_id, amount: 987.9 }])
        expect(accepted.balance).toEqual(ars("0.00"))
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a split that received nothing cannot instruct payouts", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const split = yield* createSplit()
        const [account] = yield* activeAccounts(yield* registerPayee("Ana"))
        expect(
          yield* Effect.flip(
            instruct(split.split_payment_id, [{ account_id: account!.account_id, amount: 1 }])
          )
        ).toMatchObject({ key: "split.balance.insufficient" })
        yield* expectLedgerOk
      })
    )
  )
})

describe("Execution after the hold", () => {
  it.effect(
    "nothing runs 1 ms before hold_until; at hold_until every payout is sent and the result written",
    () =>
      provideEngine(
        Effect.gen(function* () {
          yield* TestClock.setTime(START)
          yield* seedUser()
          const { split, a, b, accountA, accountB } = yield* fundedSplitWithTwoAccounts
          const id = split.split_payment_id
          yield* instruct(id, [
            { account_id: accountA.account_id, amount: 500 },
            { account_id: accountB.account_id, amount: 400 }
          ])

          yield* TestClock.adjust(HOLD - 1)
          const early = yield* runDue
          expect(early.splits).toEqual({ finished: 0, sent: 0, payouts_failed: 0, failed: 0 })
          expect(yield* sent).toEqual([])
          expect((yield* read(id)).payout_status).toBe("ON_HOLD")

          yield* TestClock.adjust(1)
          const report = yield* runDue
          expect(report.splits).toEqual({ finished: 1, sent: 2, payouts_failed: 0, failed: 0 })
          const out = yield* sent
          expect(out.map((t) => [t.to, Money.format(t.amount)])).toEqual([
            [a, "500.00"],
            [b, "400.00"]
          ])
          const done = yield* read(id)
          expect(done.payout_status).toBe("SUCCESS")
          expect(done.payouts.map((p) => p.status)).toEqual(["SUCCESS", "SUCCESS"])
          expect(done.payouts.map((p) => p.payout_id)).toEqual(out.map((t) => t.reference))
          expect(done.payouts[0]!.bank_transaction_id).toBe(out[0]!.bank_transaction_id)
          expect(done.balance).toEqual(ars("87.90"))
          expect(yield* balances(id)).toEqual({ available: 8790n, held: 0n })

          const results = (yield* events).filter((e) => e.type === "split.payouts_result")
          expect(results.map((e) => e.payload)).toEqual([
            {
              message: "split.payouts_result",
              split_payment_id: id,
              external_id: "order-1",
              payout_status: "SUCCESS"
            }
          ])

          // Running again does nothing more.
          expect((yield* runDue).splits.finished).toBe(0)
          expect(yield* sent).toHaveLength(2)
          yield* expectLedgerOk
        })
      )
  )

  it.effect("one rejected account → PARTIAL_FAILURE and its amount back in the split's balance", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const { split, b, accountA, accountB } = yield* fundedSplitWithTwoAccounts
        const id = split.split_payment_id
        yield* (yield* SandboxBank.SandboxBank).failTransfersTo(b, "rejected")
        yield* instruct(id, [
          { account_id: accountA.account_id, amount: 500 },
          { account_id: accountB.account_id, amount: 400 }
        ])
        yield* TestClock.adjust(HOLD)
        const report = yield* runDue
        expect(report.splits).toEqual({ finished: 1, sent: 1, payouts_failed: 1, failed: 0 })
        const done = yield* read(id)
        expect(done.payout_status).toBe("PARTIAL_FAILURE")
        expect(done.payouts.map((p) => p.status)).toEqual(["SUCCESS", "FAILED"])
        expect(done.payouts[1]!.failure_reason).toContain("fail")
        expect(done.balance).toEqual(ars("487.90"))
        expect(yield* balances(id)).toEqual({ available: 48790n, held: 0n })
        expect((yield* sent).map((t) => Money.format(t.amount))).toEqual(["500.00"])
        const result = (yield* events).filter((e) => e.type === "split.payouts_result")
        expect(result.map((e) => e.payload["payout_status"])).toEqual(["PARTIAL_FAILURE"])
        yield* expectLedgerOk
      })
    )
  )

  it.effect("every account rejected → FAILED and the whole total back in the balance", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const { split, a, b, accountA, accountB } = yield* fundedSplitWithTwoAccounts
        const id = split.split_payment_id
        const bank = yield* SandboxBank.SandboxBank
        yield* bank.failTransfersTo(a, "rejected")
        yield* bank.failTransfersTo(b, "rejected")
        yield* instruct(id, [
          { account_id: accountA.account_id, amount: 500 },
          { account_id: accountB.account_id, amount: 400 }
        ])
        yield* TestClock.adjust(HOLD)
        expect((yield* runDue).splits).toEqual({ finished: 1, sent: 0, payouts_failed: 2, failed: 0 })
        const done = yield* read(id)
        expect(done.payout_status).toBe("FAILED")
        expect(done.payouts.map((p) => p.status)).toEqual(["FAILED", "FAILED"])
        expect(yield* balances(id)).toEqual({ available: ars(CREDITED).minor, held: 0n })
        expect(yield* sent).toEqual([])
        // Still one instruction per split, whatever its outcome.
        expect(
          yield* Effect.flip(instruct(id, [{ account_id: accountA.account_id, amount: 1 }]))
        ).toMatchObject({ key: "split.payouts.already_instructed" })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("an account disabled during the hold is not paid; its amount returns to the balance", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const { split, a, accountA, accountB } = yield* fundedSplitWithTwoAccounts
        const id = split.split_payment_id
        yield* instruct(id, [
          { account_id: accountA.account_id, amount: 500 },
          { account_id: accountB.account_id, amount: 400 }
        ])
        yield* TestClock.adjust(Duration.hours(1))
        yield* (yield* Splits.Splits).disableAccount(asU1, accountB.account_id)
        yield* TestClock.adjust(Duration.hours(11))
        yield* runDue
        const done = yield* read(id)
        expect(done.payout_status).toBe("PARTIAL_FAILURE")
        expect(done.payouts[1]!.failure_reason).toContain("disabled")
        expect((yield* sent).map((t) => t.to)).toEqual([a])
        expect(yield* balances(id)).toEqual({ available: 48790n, held: 0n })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("concurrent runs execute each payout once", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const { split, accountA, accountB } = yield* fundedSplitWithTwoAccounts
        yield* instruct(split.split_payment_id, [
          { account_id: accountA.account_id, amount: 500 },
          { account_id: accountB.account_id, amount: 400 }
        ])
        yield* TestClock.adjust(HOLD)
        const reports = yield* Effect.all([runDue, runDue, runDue, runDue], { concurrency: "unbounded" })
        const total = (k: keyof Split.SplitRunReport) => reports.reduce((acc, r) => acc + r.splits[k], 0)
        expect(total("finished")).toBe(1)
        expect(total("sent")).toBe(2)
        expect(yield* sent).toHaveLength(2)
        expect((yield* events).filter((e) => e.type === "split.payouts_result")).toHaveLength(1)
        expect(yield* balances(split.split_payment_id)).toEqual({ available: 8790n, held: 0n })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a bank outage leaves the split PROCESSING; it is resumed after the lease, nothing lost", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const { split, b, accountA, accountB } = yield* fundedSplitWithTwoAccounts
        const id = split.split_payment_id
        const bank = yield* SandboxBank.SandboxBank
        yield* bank.failTransfersTo(b, "unavailable")
        yield* instruct(id, [
          { account_id: accountA.account_id, amount: 500 },
          { account_id: accountB.account_id, amount: 400 }
        ])
        yield* TestClock.adjust(HOLD)
        expect((yield* runDue).splits).toEqual({ finished: 0, sent: 1, payouts_failed: 0, failed: 1 })
        const midway = yield* read(id)
        expect(midway.payout_status).toBe("PROCESSING")
        expect(midway.payouts.map((p) => p.status)).toEqual(["SUCCESS", "PENDING"])
        expect(yield* balances(id)).toEqual({ available: 8790n, held: 40000n })
        expect((yield* events).filter((e) => e.type === "split.payouts_result")).toEqual([])

        // Within the lease nobody takes it; after it, the pending payout is sent.
        yield* bank.clearFailures(b)
        expect((yield* runDue).splits.sent).toBe(0)
        yield* TestClock.adjust(Split.executionLease)
        expect((yield* runDue).splits).toEqual({ finished: 1, sent: 1, payouts_failed: 0, failed: 0 })
        expect((yield* read(id)).payout_status).toBe("SUCCESS")
        expect(yield* sent).toHaveLength(2)
        expect(yield* balances(id)).toEqual({ available: 8790n, held: 0n })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a run that crashed after the bank accepted a payout is resumed without sending it twice", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const { split, accountA, accountB } = yield* fundedSplitWithTwoAccounts
        const id = split.split_payment_id
        const held = yield* instruct(id, [
          { account_id: accountA.account_id, amount: 500 },
          { account_id: accountB.account_id, amount: 400 }
        ])
        yield* TestClock.adjust(HOLD)
        // A run claimed the split and the bank accepted the first payout; then the process died.
        const repo = yield* SplitRepository.SplitRepository
        const stored = Option.getOrThrow(yield* repo.findById(id))
        const now = yield* DateTime.now
        yield* repo.update(
          new Split.SplitPayment({
            ...stored,
            payout_status: "PROCESSING",
            lease_until: DateTime.addDuration(now, Split.executionLease)
          })
        )
        const first = held.payouts[0]!
        const bank = yield* BankProvider.BankProvider
        yield* bank.sendTransfer({
          to: accountA.bank_account,
          amount: first.amount,
          reference: first.payout_id
        })

        expect((yield* runDue).splits.finished).toBe(0)
        yield* TestClock.adjust(Split.executionLease)
        expect((yield* runDue).splits).toEqual({ finished: 1, sent: 2, payouts_failed: 0, failed: 0 })
        expect(yield* sent).toHaveLength(2)
        expect((yield* read(id)).payouts.map((p) => p.status)).toEqual(["SUCCESS", "SUCCESS"])
        expect(yield* balances(id)).toEqual({ available: 8790n, held: 0n })
        yield* expectLedgerOk
      })
    )
  )

  it.effect("money reaching the split after the instruction is returned to its sender", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const { split, accountA } = yield* fundedSplitWithTwoAccounts
        yield* instruct(split.split_payment_id, [{ account_id: accountA.account_id, amount: 100 }])
        const { outcome, transfer } = yield* pay(split.cvu, "50.00")
        expect(outcome._tag).toBe("Bounced")
        const returned = yield* (yield* SandboxBank.SandboxBank).returnedTransfers
        expect(returned.map((t) => t.bank_transaction_id)).toEqual([transfer.bank_transaction_id])
        expect((yield* read(split.split_payment_id)).amount_received).toEqual(ars("1000.00"))
        expect((yield* events).filter((e) => e.type === "split.funds_received")).toHaveLength(1)
        yield* expectLedgerOk
      })
    )
  )
})
