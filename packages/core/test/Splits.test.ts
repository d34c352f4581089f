import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Schema, TestClock } from "effect"
import {
  BankAccount,
  BankProvider,
  Ids,
  Principal,
  SecondFactor,
  Split,
  Splits,
  Transfers
} from "../src/index.js"
import { SandboxBank, SandboxEngine } from "@cobro/bank-sandbox"
import { ars, events, expectLedgerOk, retriedAfterStop, seedUser } from "./fixtures.js"
import {
  accountInputs,
  activeAccounts,
  asU1,
  asU2,
  balances,
  codeFor,
  createSplit,
  CREDITED,
  FUNDED,
  pay,
  registerPayee,
  verify
} from "./splitFixtures.js"

const provideEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, SandboxEngine.layerMemory())

const seedUsers = Effect.zipRight(
  seedUser(),
  seedUser({ user_id: Ids.UserId.make("u2"), email: "dos@example.com" })
)

describe("Splits.create", () => {
  it.effect(
    "under an Idempotency-Key the answer commits with the split: a retry after a stop replays it",
    () =>
      provideEngine(
        Effect.gen(function* () {
          yield* seedUsers
          const splits = yield* Splits.Splits
          const request = Schema.decodeUnknownSync(Split.CreateSplitPaymentRequest)({
            external_id: "order-k"
          })
          const retry = yield* retriedAfterStop("s-1", splits.create(asU1, request), (v) => ({
            id: v.split_payment_id
          }))
          expect(retry.replayed).toBe(true)
          const stored = yield* splits.create(asU1, request)
          expect(JSON.parse(retry.result)).toEqual({ id: stored.split_payment_id })
        })
      )
  )

  it.effect("opens a dedicated CVU and alias; repeating the create answers the same split", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const split = yield* createSplit("order-1")
        expect(BankAccount.isValidCvu(split.cvu)).toBe(true)
        expect(BankAccount.isValidAlias(split.alias)).toBe(true)
        expect(split.payment_status).toBe("PENDING")
        expect(split.payout_status).toBeNull()
        expect(split.hold_until).toBeNull()
        expect(split.payouts).toEqual([])
        expect(yield* (yield* SandboxBank.SandboxBank).isOpen(split.cvu)).toBe(true)

        const again = yield* createSplit("order-1")
        expect(again.split_payment_id).toBe(split.split_payment_id)
        expect(again.cvu).toBe(split.cvu)

        const splits = yield* Splits.Splits
        const other = yield* Effect.flip(
          splits.create(
            asU1,
            Schema.decodeUnknownSync(Split.CreateSplitPaymentRequest)({
              external_id: "order-1",
              webhook_url: "https://elsewhere.example/hook"
            })
          )
        )
        expect(other).toMatchObject({ _tag: "Conflict", key: "split.external_id.conflict" })

        // external_id is unique per account and per partner: another account, or a partner, may reuse it.
        const ofU2 = yield* createSplit("order-1", asU2)
        expect(ofU2.split_payment_id).not.toBe(split.split_payment_id)
        const asPartner = Principal.Principal.Partner({
          user_id: asU1.user_id,
          partner_id: Ids.PartnerId.make("p1")
        })
        const ofPartner = yield* createSplit("order-1", asPartner)
        expect(ofPartner.split_payment_id).not.toBe(split.split_payment_id)
        expect(ofPartner.partner_id).toBe("p1")

        // Another account's split is not found; a partner sees only the splits it created.
        expect(yield* Effect.flip(splits.get(asU2, split.split_payment_id))).toMatchObject({
          key: "split_payment.not.found"
        })
        expect(yield* Effect.flip(splits.get(asPartner, split.split_payment_id))).toMatchObject({
          key: "split_payment.not.found"
        })
        expect((yield* splits.get(asU1, ofPartner.split_payment_id)).external_id).toBe("order-1")
        yield* expectLedgerOk
      })
    )
  )
})

describe("Funds received", () => {
  it.effect(
    "credits the split's balance net of fees and writes 'Split funds received' with hold_until null",
    () =>
      provideEngine(
        Effect.gen(function* () {
          yield* seedUser()
          const split = yield* createSplit()
          const { outcome, transfer } = yield* pay(split.cvu, FUNDED)
          expect(outcome).toEqual({ _tag: "Credited", target: "split", target_id: split.split_payment_id })

          const read = yield* (yield* Splits.Splits).get(asU1, split.split_payment_id)
          expect(read.payment_status).toBe("RECEIVED")
          expect(read.payout_status).toBeNull()
          expect(read.hold_until).toBeNull()
          expect(read.amount_received).toEqual(ars(FUNDED))
          expect(read.amount_credited).toEqual(ars(CREDITED))
          expect(read.balance).toEqual(ars(CREDITED))

          const received = (yield* events).filter((e) => e.type === "split.funds_received")
          expect(received).toHaveLength(1)
          expect(received[0]!.webhook_url).toBe("https://shop.example/hooks/split")
          expect(received[0]!.payload).toEqual({
            message: "split.funds_received",
            split_payment_id: split.split_payment_id,
            external_id: "order-1",
            amount: "1000.00",
            hold_until: null
          })

          // The same bank notification again credits nothing.
          const again = yield* (yield* Splits.Splits).get(asU1, split.split_payment_id)
          const duplicate = yield* ingestAgain(transfer)
          expect(duplicate._tag).toBe("Duplicate")
          expect((yield* balances(split.split_payment_id)).available).toBe(ars(CREDITED).minor)
          expect((yield* (yield* Splits.Splits).get(asU1, split.split_payment_id)).amount_received).toEqual(
            again.amount_received
          )
          expect((yield* events).filter((e) => e.type === "split.funds_received")).toHaveLength(1)

          // A second transfer adds up.
          yield* pay(split.cvu, "10.00")
          const after = yield* (yield* Splits.Splits).get(asU1, split.split_payment_id)
          expect(after.amount_received).toEqual(ars("1010.00"))
          yield* expectLedgerOk
        })
      )
  )

  it.effect("concurrent duplicate notifications credit once", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const split = yield* createSplit()
        const transfer = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
          cvu: split.cvu,
          amount: ars(FUNDED)
        })
        const outcomes = yield* Effect.all(
          [ingestAgain(transfer), ingestAgain(transfer), ingestAgain(transfer)],
          {
            concurrency: "unbounded"
          }
        )
        expect(outcomes.filter((o) => o._tag === "Credited")).toHaveLength(1)
        expect(outcomes.filter((o) => o._tag === "Duplicate")).toHaveLength(2)
        expect((yield* balances(split.split_payment_id)).available).toBe(ars(CREDITED).minor)
        yield* expectLedgerOk
      })
    )
  )
})

describe("Payout accounts", () => {
  it.effect("one request, one code: verifying activates every account of the request", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.UTC(2026, 10, 20, 12, 0, 0))
        yield* seedUser()
        const a = yield* registerPayee("Ana Proveedora", "ana.proveedora")
        const b = yield* registerPayee("Beto Logistica")
        const splits = yield* Splits.Splits
        const request = yield* splits.createAccounts(asU1, accountInputs("ana.proveedora", b))
        expect(DateTime.formatIso(request.exp_timestamp)).toBe("2026-11-20T12:10:00.000Z")
        expect(request.accounts.map((x) => x.status)).toEqual([
          "PENDING_VERIFICATION",
          "PENDING_VERIFICATION"
        ])
        // The alias was resolved to its bank account; the holder is stored.
        expect(request.accounts[0]!.bank_account).toBe(a)
        expect(request.accounts[0]!.holder_name).toBe("Ana Proveedora")
        expect(request.accounts[1]!.holder_cuit).toMatch(/^\d{11}$/)

        // Exactly one code was delivered, for this request.
        const delivered = yield* (yield* SecondFactor.SandboxSecondFactor).delivered
        expect(delivered).toHaveLength(1)
        expect(delivered[0]!.request_id).toBe(request.request_id)
        expect(delivered[0]!.code).toBe(SecondFactor.sandboxCode(request.request_id))

        const verified = yield* verify(request.request_id, yield* codeFor(request.request_id))
        expect(verified.status).toBe("VERIFIED")
        expect(verified.accounts.map((x) => x.status)).toEqual(["ACTIVE", "ACTIVE"])
        expect((yield* splits.listAccounts(asU1)).map((x) => x.status)).toEqual(["ACTIVE", "ACTIVE"])

        // A request verifies once; another account's request is not found.
        expect(
          yield* Effect.flip(verify(request.request_id, yield* codeFor(request.request_id)))
        ).toMatchObject({
          _tag: "Conflict",
          key: "verification.used"
        })
        expect(
          yield* Effect.flip(verify(request.request_id, yield* codeFor(request.request_id), asU2))
        ).toMatchObject({ _tag: "NotFound" })
        expect(yield* splits.listAccounts(asU2)).toEqual([])
        yield* expectLedgerOk
      })
    )
  )

  it.effect("rejects unknown bank accounts, repeated accounts and an already active one", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const splits = yield* Splits.Splits
        const unknown = BankAccount.makeCbu("2850590", "9999999999999")
        expect(yield* Effect.flip(splits.createAccounts(asU1, accountInputs(unknown)))).toMatchObject({
          _tag: "InvalidInput",
          key: "payout_account.holder.not.found",
          field: "accounts[0].address"
        })
        const a = yield* registerPayee("Ana", "ana.proveedora")
        expect(
          yield* Effect.flip(splits.createAccounts(asU1, accountInputs(a, "ana.proveedora")))
        ).toMatchObject({
          _tag: "InvalidInput",
          field: "accounts[1].address"
        })
        yield* activeAccounts(a)
        expect(yield* Effect.flip(splits.createAccounts(asU1, accountInputs(a)))).toMatchObject({
          _tag: "Conflict",
          key: "payout_account.exists"
        })
        expect(() => accountInputs()).toThrow()
        expect(() => accountInputs("not an address!")).toThrow()
        // Nothing was delivered for the refused requests.
        expect(yield* (yield* SecondFactor.SandboxSecondFactor).delivered).toHaveLength(1)
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a wrong code is rejected and counted; the fifth wrong code locks the request", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const a = yield* registerPayee("Ana")
        const splits = yield* Splits.Splits
        const request = yield* splits.createAccounts(asU1, accountInputs(a))
        const right = yield* codeFor(request.request_id)
        const wrong = right === "000000" ? "111111" : "000000"
        for (let left = 4; left >= 1; left--) {
          const e = yield* Effect.flip(verify(request.request_id, wrong))
          expect(e).toMatchObject({ _tag: "InvalidInput", key: "verification.code.invalid", field: "code" })
          expect(e.message).toContain(`${left} attempts left`)
        }
        expect(yield* Effect.flip(verify(request.request_id, wrong))).toMatchObject({
          _tag: "Conflict",
          key: "verification.locked"
        })
        // Locked: even the right code no longer works, and the account stays unverified.
        expect(yield* Effect.flip(verify(request.request_id, right))).toMatchObject({
          key: "verification.locked"
        })
        expect((yield* splits.listAccounts(asU1))[0]!.status).toBe("PENDING_VERIFICATION")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("a wrong code before the right one still verifies within the attempts", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const a = yield* registerPayee("Ana")
        const request = yield* (yield* Splits.Splits).createAccounts(asU1, accountInputs(a))
        yield* Effect.flip(verify(request.request_id, "12345"))
        const verified = yield* verify(request.request_id, yield* codeFor(request.request_id))
        expect(verified.accounts[0]!.status).toBe("ACTIVE")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("an expired code is rejected, even the right one", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUser()
        const a = yield* registerPayee("Ana")
        const splits = yield* Splits.Splits
        const request = yield* splits.createAccounts(asU1, accountInputs(a))
        yield* TestClock.adjust(Duration.minutes(10))
        expect(
          yield* Effect.flip(verify(request.request_id, yield* codeFor(request.request_id)))
        ).toMatchObject({
          _tag: "InvalidInput",
          key: "verification.expired"
        })
        expect((yield* splits.listAccounts(asU1))[0]!.status).toBe("PENDING_VERIFICATION")
        yield* expectLedgerOk
      })
    )
  )

  it.effect("disabling keeps the account's record; disabling twice changes nothing", () =>
    provideEngine(
      Effect.gen(function* () {
        yield* seedUsers
        const a = yield* registerPayee("Ana")
        const [account] = yield* activeAccounts(a)
        const splits = yield* Splits.Splits
        expect(yield* Effect.flip(splits.disableAccount(asU2, account!.account_id))).toMatchObject({
          _tag: "NotFound",
          key: "payout_account.not.found"
        })
        yield* TestClock.adjust(Duration.minutes(1))
        const disabled = yield* splits.disableAccount(asU1, account!.account_id)
        expect(disabled.status).toBe("DISABLED")
        expect(disabled.address).toBe(account!.address)
        expect(disabled.activation_timestamp).toEqual(account!.activation_timestamp)
        expect(disabled.disabled_timestamp).not.toBeNull()
        expect(yield* splits.disableAccount(asU1, account!.account_id)).toEqual(disabled)
        // The same address can be whitelisted again, as a new account with its own verification.
        const [again] = yield* activeAccounts(a)
        expect(again!.account_id).not.toBe(account!.account_id)
        yield* expectLedgerOk
      })
    )
  )
})

describe("State machines", () => {
  it("allow only the documented transitions", () => {
    expect(Split.transition(Split.payoutMachine, "NONE", "ON_HOLD")._tag).toBe("Right")
    expect(Split.transition(Split.payoutMachine, "ON_HOLD", "ON_HOLD")._tag).toBe("Left")
    expect(Split.transition(Split.payoutMachine, "ON_HOLD", "SUCCESS")._tag).toBe("Left")
    expect(Split.transition(Split.payoutMachine, "SUCCESS", "PROCESSING")._tag).toBe("Left")
    expect(Split.transition(Split.payoutStateMachine, "FAILED", "SUCCESS")._tag).toBe("Left")
    expect(Split.transition(Split.accountMachine, "ACTIVE", "PENDING_VERIFICATION")._tag).toBe("Left")
    expect(Split.transition(Split.accountMachine, "DISABLED", "ACTIVE")._tag).toBe("Left")
    expect(Split.transition(Split.paymentMachine, "RECEIVED", "PENDING")._tag).toBe("Left")
  })
})

const ingestAgain = (transfer: BankProvider.IncomingTransfer) =>
  Effect.flatMap(Transfers.Transfers, (t) => t.ingest(transfer))
