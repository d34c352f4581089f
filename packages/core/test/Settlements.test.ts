/**
 * Settlement by registration: the registry holds one settlement per purpose (building it dies
 * otherwise), and one `settleDue` checks the due transfers of every purpose, each settled
 * through its own owner's settlement.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer, Option, TestClock } from "effect"
import * as Settlements from "../src/outgoing/Settlement.js"
import {
  BankAccount,
  EngineConfig,
  Ledger,
  LedgerAccount,
  Money,
  OutgoingTransfer,
  OutgoingTransfers
} from "../src/index.js"
import { Transactor } from "../src/ports.js"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"

const purposes = OutgoingTransfer.TransferPurpose.literals

/** A settlement that notes what it heard; a split payout's finishes its owner's work. */
const noting = (purpose: OutgoingTransfer.TransferPurpose, heard: Array<string>) =>
  Effect.succeed<Settlements.Settlement>({
    purpose,
    completedKind: `${purpose}.sent`,
    failedKind: `${purpose}.failed`,
    settled: (transfer, outcome) =>
      Effect.sync(() => {
        heard.push(`${transfer.reference} ${outcome._tag}`)
        return purpose === "split_payout"
      })
  })

const defectOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit)
    ? Option.map(Cause.dieOption(exit.cause), (defect) => (defect as { readonly message: string }).message)
    : Option.none()

describe("Settlements", () => {
  it.scoped("the registry refuses a purpose without a settlement, or with two", () =>
    Effect.gen(function* () {
      const heard: Array<string> = []
      const missing = yield* Effect.exit(
        Layer.build(Settlements.layer(noting("refund", heard), noting("schedule_payout", heard)))
      )
      expect(defectOf(missing)).toEqual(Option.some("no settlement is registered for split_payout"))
      const twice = yield* Effect.exit(
        Layer.build(Settlements.layer(...purposes.map((p) => noting(p, heard)), noting("refund", heard)))
      )
      expect(defectOf(twice)).toEqual(Option.some('two settlements are registered for "refund"'))
      const all = yield* Layer.build(Settlements.layer(...purposes.map((p) => noting(p, heard))))
      expect(Context.get(all, Settlements.Settlements).purposes).toEqual(purposes)
    })
  )

  it.scoped(
    "one settleDue checks the due transfers of every purpose, each through its owner's settlement",
    () =>
      Effect.gen(function* () {
        const heard: Array<string> = []
        const built = yield* Layer.build(
          OutgoingTransfers.OutgoingTransfers.Default.pipe(
            Layer.provide(Settlements.layer(...purposes.map((p) => noting(p, heard))))
          )
        )
        const outgoing = Context.get(built, OutgoingTransfers.OutgoingTransfers)
        const bank = yield* SandboxBank.SandboxBank
        const ledger = yield* Ledger.Ledger
        const destination = BankAccount.makeCbu("2850590", "0000000012345")
        yield* bank.registerHolder({
          account: destination,
          cuit: BankAccount.makeCuit("20", "12345678"),
          name: "Ana"
        })
        // The bank accepts each transfer and answers "pending" to the first status query.
        yield* bank.holdTransfers(1)
        const amount = Money.make(150000n, "ARS")
        const inTransit = LedgerAccount.merchantInTransit("u1")
        const available = LedgerAccount.merchantAvailable("u1")
        const recorded = yield* Effect.flatMap(Transactor.Transactor, (t) =>
          t.withTransaction(
            Effect.forEach(purposes, (purpose) =>
              Effect.gen(function* () {
                yield* ledger.post({
                  kind: "test.in_transit",
                  reference: `t_${purpose}`,
                  postings: [
                    Ledger.debit(LedgerAccount.bankClearing, amount),
                    Ledger.credit(inTransit, amount)
                  ]
                })
                return yield* outgoing.record({
                  reference: `t_${purpose}`,
                  purpose,
                  owner_id: `owner_${purpose}`,
                  destination,
                  amount,
                  in_transit: inTransit,
                  return_to: available
                })
              })
            )
          )
        ).pipe(Effect.orDie)
        for (const transfer of recorded)
          expect((yield* outgoing.dispatch(Option.getOrThrow(transfer))).step).toBe("pending")

        const none = { completed: 0, failed: 0, pending: 0, resent: 0, unknown: 0, errors: 0, finished: 0 }
        // Not due before `transferCheckInterval`.
        expect(yield* outgoing.settleDue()).toEqual({
          refund: none,
          schedule_payout: none,
          split_payout: none
        })
        const checkLater = Effect.flatMap(EngineConfig.EngineConfig, (c) =>
          TestClock.adjust(c.transferCheckInterval)
        )
        yield* checkLater
        // The first status query: still pending at the bank, asked again later.
        const pending = { ...none, pending: 1 }
        expect(yield* outgoing.settleDue()).toEqual({
          refund: pending,
          schedule_payout: pending,
          split_payout: pending
        })
        expect(heard).toEqual([])
        yield* checkLater
        const second = yield* outgoing.settleDue()
        expect(second).toEqual({
          refund: { ...none, completed: 1 },
          schedule_payout: { ...none, completed: 1 },
          split_payout: { ...none, completed: 1, finished: 1 }
        })
        expect(heard.sort()).toEqual([
          "t_refund Completed",
          "t_schedule_payout Completed",
          "t_split_payout Completed"
        ])
        // Each transfer's money left in transit for the bank, once.
        expect(Money.format(yield* ledger.balance(inTransit, "ARS"))).toBe("0.00")
        expect(yield* outgoing.settleDue()).toEqual({
          refund: none,
          schedule_payout: none,
          split_payout: none
        })
      }).pipe(Effect.provide(SandboxEngine.layerMemory()))
  )
})
