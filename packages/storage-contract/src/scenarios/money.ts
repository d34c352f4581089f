/**
 * Money at the edges of its range: the maximum amount cobro takes in (`Money.maxMinor`) goes in
 * and comes back exactly, one centavo more is refused before anything is stored, and amounts and
 * sums past 2^53 minor units (rows written before the maximum existed, balances that grew) read
 * back exactly, so `Ledger.verify` reports the books as they are.
 */
import { expect } from "@effect/vitest"
import { BankAccount, Ids, Ledger, LedgerAccount, Money, PaymentRequest, Payments } from "@cobro/core"
import { LedgerRepository, PaymentRepository, TransferRepository } from "@cobro/core/ports"
import { Faucet } from "@cobro/bank-sandbox"
import { DateTime, Effect, Option } from "effect"
import type { Scenario } from "../Scenario.js"
import { ars, createRequest, expectLedgerOk, seedUser, u1 } from "./fixtures.js"

/** A faucet of 123456789012345.67 pesos, and 2^53 + 1 centavos: not exact as doubles. */
const huge = 12_345_678_901_234_567n
const pastSafe = 9_007_199_254_740_993n

/** The failure of `effect` as `field: message` (an `InvalidInput`), or its tag. */
const refusal = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (e) =>
    e._tag === "InvalidInput" ? `${(e as unknown as { field: string }).field}` : e._tag
  )

export const moneyScenarios: ReadonlyArray<Scenario> = [
  {
    name: "money: amounts and sums past 2^53 minor units read back exactly; verify says OK, and a wrong sum is caught",
    run: Effect.gen(function* () {
      const ledger = yield* Ledger.Ledger
      const repo = yield* LedgerRepository.LedgerRepository
      const merchant = LedgerAccount.merchantAvailable(u1)
      const commission = LedgerAccount.platformCommission
      // A credit as a transfer makes it: the gross in, the net to the merchant, the fee to us.
      yield* ledger.post({
        kind: "test.credit",
        reference: "r-huge",
        postings: [
          Ledger.debit(LedgerAccount.bankClearing, ars(huge)),
          Ledger.credit(merchant, ars(huge - 1_234n)),
          Ledger.credit(commission, ars(1_234n))
        ]
      })
      for (const minor of [pastSafe, 9_007_199_254_740_992n]) {
        yield* ledger.post({
          kind: "test.credit",
          reference: `r-${minor}`,
          postings: [
            Ledger.debit(LedgerAccount.bankClearing, ars(minor)),
            Ledger.credit(merchant, ars(minor))
          ]
        })
      }
      const total = huge + pastSafe + 9_007_199_254_740_992n
      const report = yield* ledger.verify()
      expect(report.problems).toEqual([])
      expect(report.entries).toBe(3)
      expect(yield* ledger.balance(merchant)).toEqual(ars(total - 1_234n))
      expect(yield* repo.sumOf(LedgerAccount.bankClearing, "ARS")).toBe(total)
      expect(
        (yield* repo.balances)
          .map((b) => [b.account, b.sum])
          .sort(([a], [b]) => (String(a) < String(b) ? -1 : 1))
      ).toEqual([
        [LedgerAccount.bankClearing, total],
        [merchant, -(total - 1_234n)],
        [commission, -1_234n]
      ])
      const entries = yield* repo.entries(0, 10)
      expect(entries.map((e) => e.entry.postings.map((p) => p.amount.minor))).toEqual([
        [huge, -(huge - 1_234n), -1_234n],
        [pastSafe, -pastSafe],
        [9_007_199_254_740_992n, -9_007_199_254_740_992n]
      ])

      // A balance that is really one centavo off is still reported, with the exact figures.
      yield* repo.append(
        new LedgerRepository.JournalEntry({
          entry_id: Ids.LedgerEntryId.make("le_unbalanced"),
          kind: "test.broken",
          reference: "broken",
          created_at: yield* DateTime.now,
          postings: [new LedgerRepository.Posting({ account: merchant, amount: ars(-1n) })]
        })
      )
      expect((yield* ledger.verify()).problems).toEqual([
        "entry le_unbalanced does not balance: ARS postings sum to -1"
      ])
      expect(yield* ledger.balance(merchant)).toEqual(ars(total - 1_234n + 1n))

      const transfers = yield* TransferRepository.TransferRepository
      const record = new TransferRepository.TransferRecord({
        bank_transaction_id: Ids.BankTransactionId.make("trx-huge"),
        cvu: BankAccount.makeCvu("0000003", "9999999999999"),
        amount: ars(huge),
        target: "payment",
        target_id: null,
        received_at: yield* DateTime.now
      })
      expect(yield* transfers.insert(record)).toBe(true)
      expect(Option.getOrThrow(yield* transfers.findById(record.bank_transaction_id)).amount).toEqual(
        ars(huge)
      )
    })
  },
  {
    name: "money: the maximum amount is taken in and read back exactly; above it nothing is stored",
    run: Effect.gen(function* () {
      yield* seedUser()
      const payments = yield* Payments.Payments
      const faucet = yield* Faucet.Faucet
      const max = Money.maximum("ARS")
      expect(Money.format(max)).toBe("99999999999.99")

      const p = yield* payments.create(
        createRequest({ price: { amount: 99_999_999_999.99, currency: "ARS" } })
      )
      expect(p.price).toEqual(max)
      expect(p.quotes[0]!.amount).toEqual(max)
      expect(
        Option.getOrThrow(yield* (yield* PaymentRepository.PaymentRepository).findById(p.id)).price
      ).toEqual(max)

      // Refused before anything is written, naming the field.
      for (const amount of [100_000_000_000, 1e21, 1e308, 12_345_678_901_234_567_000]) {
        expect(yield* refusal(faucet.send(u1, p.cvu, new Faucet.FaucetRequest({ amount })))).toBe("amount")
        expect(
          yield* refusal(
            payments.reprice(u1, p.id, new PaymentRequest.RepriceRequest({ currency: "ARS", amount }))
          )
        ).toBe("amount")
      }
      expect((yield* (yield* Ledger.Ledger).verify()).entries).toBe(0)

      // A price in another currency whose ARS quote is above the maximum (BRL at 220).
      expect(
        yield* refusal(
          payments.create(
            createRequest({ external_id: "brl", price: { amount: 50_000_000_000, currency: "BRL" } })
          )
        )
      ).toBe("price.amount")

      const sent = yield* faucet.send(u1, p.cvu, new Faucet.FaucetRequest({ amount: 99_999_999_999.99 }))
      expect(sent.transfer.amount).toEqual(max)
      expect(sent.outcome._tag).toBe("Credited")
      const paid = yield* payments.get(u1, p.id)
      expect(paid.payment_status).toBe("SUCCESS")
      expect(paid.transactions.map((t) => t.amount)).toEqual([max])
      const logged = yield* (yield* TransferRepository.TransferRepository).findById(
        sent.transfer.bank_transaction_id
      )
      expect(Option.getOrThrow(logged).amount).toEqual(max)
      yield* expectLedgerOk

      const repriced = yield* payments.reprice(
        u1,
        p.id,
        new PaymentRequest.RepriceRequest({ currency: "ARS", amount: 99_999_999_999.99 })
      )
      expect(repriced.price).toEqual(max)
    })
  }
]
