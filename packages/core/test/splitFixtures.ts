import { Effect, Option, Schema } from "effect"
import {
  BankAccount,
  Ids,
  Ledger,
  LedgerAccount,
  Principal,
  SecondFactor,
  Split,
  Splits,
  Transfers
} from "../src/index.js"
import { SandboxBank } from "@cobro/bank-sandbox"
import { ars } from "./fixtures.js"

export const u1 = Ids.UserId.make("u1")
export const asU1 = Principal.Principal.User({ user_id: u1 })
export const asU2 = Principal.Principal.User({ user_id: Ids.UserId.make("u2") })

/** With the sandbox fees (1 % + 21 % IVA on it), 1000.00 received credits 987.90. */
export const FUNDED = "1000.00"
export const CREDITED = "987.90"

export const createSplit = (external_id = "order-1", principal: Principal.Principal = asU1) =>
  Effect.flatMap(Splits.Splits, (s) =>
    s.create(
      principal,
      Schema.decodeUnknownSync(Split.CreateSplitPaymentRequest)({
        external_id,
        webhook_url: "https://shop.example/hooks/split"
      })
    )
  )

/** A bank notification of `amount` to `cvu`, ingested; returns the transfer and the outcome. */
export const pay = (cvu: BankAccount.Cvu, amount: string) =>
  Effect.gen(function* () {
    const bank = yield* SandboxBank.SandboxBank
    const transfer = yield* bank.simulateIncoming({ cvu, amount: ars(amount) })
    const outcome = yield* (yield* Transfers.Transfers).ingest(transfer)
    return { transfer, outcome } as const
  })

let nextPayee = 1

/** An external bank account known to the sandbox bank (so its holder can be looked up). */
export const registerPayee = (name: string, alias?: string) =>
  Effect.gen(function* () {
    const n = nextPayee++
    const account = BankAccount.makeCbu("2850590", n.toString().padStart(13, "0"))
    yield* (yield* SandboxBank.SandboxBank).registerHolder({
      account,
      alias,
      cuit: BankAccount.makeCuit("20", (30000000 + n).toString()),
      name
    })
    return account as string
  })

export const accountInputs = (...addresses: ReadonlyArray<string>) =>
  Schema.decodeUnknownSync(Split.PayoutAccountList)(addresses.map((address) => ({ address })))

/** The code the sandbox delivered for a verification request. */
export const codeFor = (request_id: Ids.VerificationRequestId) =>
  Effect.flatMap(SecondFactor.SandboxSecondFactor, (s) => s.codeFor(request_id)).pipe(
    Effect.map(Option.getOrThrow)
  )

export const verify = (
  request_id: Ids.VerificationRequestId,
  code: string,
  principal: Principal.Principal = asU1
) =>
  Effect.flatMap(Splits.Splits, (s) =>
    s.verifyAccounts(principal, Schema.decodeUnknownSync(Split.VerifyAccountsRequest)({ request_id, code }))
  )

/** Payout accounts created and verified with the delivered code, all ACTIVE. */
export const activeAccounts = (...addresses: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const splits = yield* Splits.Splits
    const request = yield* splits.createAccounts(asU1, accountInputs(...addresses))
    const verified = yield* verify(request.request_id, yield* codeFor(request.request_id))
    return verified.accounts
  })

export const instruction = (payouts: ReadonlyArray<{ account_id: string; amount: number }>) =>
  Schema.decodeUnknownSync(Split.InstructPayoutsRequest)({ payouts })

export const instruct = (
  id: Ids.SplitPaymentId,
  payouts: ReadonlyArray<{ account_id: string; amount: number }>,
  principal: Principal.Principal = asU1
) => Effect.flatMap(Splits.Splits, (s) => s.instructPayouts(principal, id, instruction(payouts)))

/** The split's available and held balances in the ledger, as text. */
export const balances = (id: Ids.SplitPaymentId) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger.Ledger
    const available = yield* ledger.balance(LedgerAccount.splitBalance(id))
    const held = yield* ledger.balance(LedgerAccount.splitHeld(id))
    return { available: available.minor, held: held.minor }
  })

/** A funded split and two ACTIVE payout accounts (by CBU). */
export const fundedSplitWithTwoAccounts = Effect.gen(function* () {
  const split = yield* createSplit()
  yield* pay(split.cvu, FUNDED)
  const a = yield* registerPayee("Ana Proveedora")
  const b = yield* registerPayee("Beto Logistica")
  const [accountA, accountB] = yield* activeAccounts(a, b)
  return { split, a, b, accountA: accountA!, accountB: accountB! }
})
