/** The records, requests and engine actions the split payments scenarios share. */
import { expect } from "@effect/vitest"
import { BankAccount, Ids, Principal, SecondFactor, Split, Splits, Transfers } from "@cobro/core"
import { Faucet, SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Duration, Effect, Option, Schema, TestClock } from "effect"
import type { EngineContext } from "../../Scenario.js"
import { ars, seedUser, u1 } from "../fixtures.js"

export const T0 = Date.UTC(2026, 10, 20, 12, 0, 0)
export const HOLD = Duration.toMillis(Split.holdDuration)
export const at = (ms: number) => DateTime.unsafeMake(ms)
export const asU1 = Principal.Principal.User({ user_id: u1 })
export const cbu = (n: number) => BankAccount.makeCbu("2850590", n.toString().padStart(13, "0"))

export const createSplit = (
  external_id: string,
  principal: Principal.Principal = asU1
): Effect.Effect<Split.SplitPaymentView, unknown, EngineContext> =>
  Effect.flatMap(Splits.Splits, (s) =>
    s.create(
      principal,
      Schema.decodeUnknownSync(Split.CreateSplitPaymentRequest)({
        external_id,
        webhook_url: "https://shop.example/hooks/split"
      })
    )
  )

export const read = (id: Ids.SplitPaymentId): Effect.Effect<Split.SplitPaymentView, unknown, EngineContext> =>
  Effect.flatMap(Splits.Splits, (s) => s.get(asU1, id))
/** An external bank account known to the sandbox bank (so its holder can be looked up). */
export const registerPayee = (n: number, name: string) =>
  Effect.gen(function* () {
    const account = cbu(n)
    yield* (yield* SandboxBank.SandboxBank).registerHolder({
      account,
      cuit: BankAccount.makeCuit("20", (30000000 + n).toString()),
      name
    })
    return account as string
  })

export const accountInputs = (...addresses: ReadonlyArray<string>) =>
  Schema.decodeUnknownSync(Split.PayoutAccountList)(addresses.map((address) => ({ address })))

export const codeFor = (request_id: Ids.VerificationRequestId) =>
  Effect.map(
    Effect.flatMap(SecondFactor.SandboxSecondFactor, (s) => s.codeFor(request_id)),
    Option.getOrThrow
  )

export const verify = (
  request_id: Ids.VerificationRequestId,
  code: string
): Effect.Effect<Split.VerificationRequestView, unknown, EngineContext> =>
  Effect.flatMap(Splits.Splits, (s) =>
    s.verifyAccounts(asU1, Schema.decodeUnknownSync(Split.VerifyAccountsRequest)({ request_id, code }))
  )

/** Payout accounts created and verified with the code the sandbox delivered, all ACTIVE. */
export const activeAccounts = (
  ...addresses: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<Split.PayoutAccount>, unknown, EngineContext> =>
  Effect.gen(function* () {
    const request = yield* (yield* Splits.Splits).createAccounts(asU1, accountInputs(...addresses))
    return (yield* verify(request.request_id, yield* codeFor(request.request_id))).accounts
  })

export const instruct = (
  id: Ids.SplitPaymentId,
  payouts: ReadonlyArray<{ account_id: string; amount: number }>
): Effect.Effect<Split.SplitPaymentView, unknown, EngineContext> =>
  Effect.flatMap(Splits.Splits, (s) =>
    s.instructPayouts(asU1, id, Schema.decodeUnknownSync(Split.InstructPayoutsRequest)({ payouts }))
  )

/** 1000.00 received (600 by the faucet, 400 by a bank notification) credits 987.90 after fees. */
export const fund = (cvu: BankAccount.Cvu): Effect.Effect<void, unknown, EngineContext> =>
  Effect.gen(function* () {
    const byFaucet = yield* (yield* Faucet.Faucet).send(u1, cvu, new Faucet.FaucetRequest({ amount: 600 }))
    expect(byFaucet.outcome._tag).toBe("Credited")
    const transfer = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({ cvu, amount: ars(40000n) })
    expect((yield* (yield* Transfers.Transfers).ingest(transfer))._tag).toBe("Credited")
  })

/** A funded split and two ACTIVE payout accounts; the split is instructed 500.00 + 400.00. */
export const instructedSplit = (
  failing?: SandboxBank.TransferFailure
): Effect.Effect<
  { readonly id: Ids.SplitPaymentId; readonly a: string; readonly b: string },
  unknown,
  EngineContext
> =>
  Effect.gen(function* () {
    yield* TestClock.setTime(T0)
    yield* seedUser()
    const split = yield* createSplit("order-1")
    yield* fund(split.cvu)
    const a = yield* registerPayee(1, "Ana Proveedora")
    const b = yield* registerPayee(2, "Beto Logistica")
    if (failing !== undefined) yield* (yield* SandboxBank.SandboxBank).failTransfersTo(b, failing)
    const [accountA, accountB] = yield* activeAccounts(a, b)
    const held = yield* instruct(split.split_payment_id, [
      { account_id: accountA!.account_id, amount: 500 },
      { account_id: accountB!.account_id, amount: 400 }
    ])
    return { id: split.split_payment_id, a, b, held } as const
  })
