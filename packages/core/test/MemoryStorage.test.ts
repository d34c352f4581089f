import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { Ids, Ledger, LedgerAccount, Money, Outbox } from "../src/index.js"
import { LedgerRepository, Transactor, UserRepository } from "../src/ports.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { ars, events, expectLedgerOk, seedUser } from "./fixtures.js"

const withStorage = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

describe("memory adapters are transactional", () => {
  it.effect("a failed unit of work rolls back every table it touched; a successful one commits", () =>
    withStorage(
      Effect.gen(function* () {
        const transactor = yield* Transactor.Transactor
        const outbox = yield* Outbox.Outbox
        const ledger = yield* Ledger.Ledger
        const unit = Effect.gen(function* () {
          yield* seedUser()
          yield* outbox.append(
            yield* Outbox.makeEvent({
              type: "account.activated",
              user_id: Ids.UserId.make("u1"),
              webhook_url: null,
              payload: {}
            })
          )
          yield* ledger.post({
            kind: "test",
            reference: "r1",
            postings: [
              Ledger.debit(LedgerAccount.bankClearing, ars("10")),
              Ledger.credit(LedgerAccount.merchantAvailable("u1"), ars("10"))
            ]
          })
        })
        const failed = yield* Effect.flip(
          transactor.withTransaction(Effect.zipRight(unit, Effect.fail("boom" as const)))
        )
        expect(failed).toBe("boom")
        expect(yield* (yield* UserRepository.UserRepository).findById(Ids.UserId.make("u1"))).toEqual(
          Option.none()
        )
        expect(yield* events).toEqual([])
        expect((yield* ledger.verify()).entries).toBe(0)

        yield* Effect.exit(transactor.withTransaction(Effect.zipRight(unit, Effect.die("defect"))))
        expect(yield* events).toEqual([])

        yield* transactor.withTransaction(unit)
        expect(yield* events).toHaveLength(1)
        expect(yield* ledger.balance(LedgerAccount.merchantAvailable("u1"))).toEqual(ars("10"))
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a nested unit of work that fails is rolled back alone (savepoint)", () =>
    withStorage(
      Effect.gen(function* () {
        const transactor = yield* Transactor.Transactor
        yield* transactor.withTransaction(
          Effect.gen(function* () {
            yield* seedUser()
            const inner = transactor.withTransaction(
              Effect.zipRight(
                seedUser({ user_id: Ids.UserId.make("u2"), email: "dos@example.com" }),
                Effect.fail("inner")
              )
            )
            expect(yield* Effect.flip(inner)).toBe("inner")
          })
        )
        const users = yield* UserRepository.UserRepository
        expect(Option.isSome(yield* users.findById(Ids.UserId.make("u1")))).toBe(true)
        expect(Option.isNone(yield* users.findById(Ids.UserId.make("u2")))).toBe(true)
      })
    )
  )
})

describe("Ledger", () => {
  it.effect("refuses a movement that would make a merchant balance negative, inside the unit of work", () =>
    withStorage(
      Effect.gen(function* () {
        const ledger = yield* Ledger.Ledger
        const transactor = yield* Transactor.Transactor
        const overdraw = ledger.post({
          kind: "test",
          reference: "r",
          postings: [
            Ledger.debit(LedgerAccount.merchantAvailable("u1"), ars("1")),
            Ledger.credit(LedgerAccount.bankClearing, ars("1"))
          ]
        })
        const e = yield* Effect.flip(transactor.withTransaction(overdraw))
        expect(e).toMatchObject({ _tag: "Conflict", key: "ledger.insufficient.funds" })
        expect((yield* ledger.verify()).entries).toBe(0)
        expect(yield* ledger.balance(LedgerAccount.merchantAvailable("u1"))).toEqual(Money.zero("ARS"))
      })
    )
  )

  it.effect("verify reports an unbalanced entry and a negative balance written behind its back", () =>
    withStorage(
      Effect.gen(function* () {
        const repo = yield* LedgerRepository.LedgerRepository
        yield* repo.append(
          new LedgerRepository.JournalEntry({
            entry_id: Ids.LedgerEntryId.make("le_bad"),
            kind: "tampered",
            reference: "x",
            created_at: DateTime.unsafeMake(0),
            postings: [
              new LedgerRepository.Posting({
                account: LedgerAccount.merchantAvailable("u1"),
                amount: ars("5")
              })
            ]
          })
        )
        const report = yield* (yield* Ledger.Ledger).verify()
        expect(report.problems).toEqual([
          "entry le_bad does not balance: ARS postings sum to 500",
          "merchant:u1:available ARS is negative"
        ])
      })
    )
  )

  it.effect("an unbalanced entry is a defect and is never stored", () =>
    withStorage(
      Effect.gen(function* () {
        const ledger = yield* Ledger.Ledger
        const exit = yield* Effect.exit(
          ledger.post({
            kind: "test",
            reference: "r",
            postings: [Ledger.debit(LedgerAccount.bankClearing, ars("1"))]
          })
        )
        expect(exit._tag).toBe("Failure")
        expect((yield* ledger.verify()).entries).toBe(0)
      })
    )
  )
})
