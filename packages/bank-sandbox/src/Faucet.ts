/**
 * The sandbox faucet: simulates a transfer from a payer to one of the caller's CVUs and ingests
 * it exactly as a real bank notification would be.
 */
import { Cause, Effect, Either, Exit, Option, Schema } from "effect"
import { BankAccount, type BankProvider, Errors, type Ids, Money, Spans, Transfers, Wire } from "@cobro/core"
import { SandboxBank } from "./SandboxBank.js"

export class FaucetRequest extends Wire.Class<FaucetRequest>("FaucetRequest")({
  /** Pesos, as a JSON number with at most 2 decimals; parsed by `send` (`Money.fromInput`). */
  amount: Wire.ArsInputNumber,
  /** The simulated sender's CUIT. */
  cuit: Schema.optional(BankAccount.Cuit),
  /**
   * The simulated sender's account (a CBU, or a CVU): where a refund of this transfer goes. A
   * random valid CBU when absent, so every sandbox transfer has a sender account.
   */
  cbu: Schema.optional(
    Schema.String.pipe(
      Schema.filter(BankAccount.isValidCbu, { message: () => "must be a valid 22-digit CBU or CVU" })
    )
  )
}) {}

/** A faucet transfer: as the bank drew it, and what the engine made of it. */
export interface Sent {
  readonly transfer: BankProvider.IncomingTransfer
  readonly outcome: Transfers.IngestOutcome
}

export class Faucet extends Effect.Service<Faucet>()("@cobro/bank-sandbox/Faucet", {
  effect: Effect.gen(function* () {
    const sandbox = yield* SandboxBank
    const transfers = yield* Transfers.Transfers

    /**
     * The transfer is drawn (numbered and sealed by the sandbox bank), then ingested for the
     * caller only (`ingestFor`: whether the CVU is one of the caller's is decided in the unit of
     * work that credits, on the directory's entry it locks, with no statement of its own), then
     * booked in the bank's statement. A CVU that is not the caller's answers `NotFound` and
     * leaves nothing, in the engine or the bank. Any other end (credited, bounced, a duplicate,
     * a failure, the caller gone) books it: the bank received the money, and reconciliation reads
     * the statement for notifications the engine missed.
     */
    const send = Spans.fn("Faucet.send")(function* (
      owner: Ids.UserId,
      cvu: BankAccount.Cvu,
      request: FaucetRequest
    ) {
      const amount = yield* Either.mapLeft(Money.fromInput(request.amount, "ARS"), (e) =>
        Errors.InvalidInput.of("amount", e.message)
      )
      if (amount.minor <= 0n) return yield* Errors.InvalidInput.of("amount", "must be positive")
      const transfer = yield* sandbox.drawIncoming({
        cvu,
        amount,
        ...(request.cuit ? { senderCuit: request.cuit } : {}),
        ...(request.cbu ? { senderAccount: request.cbu } : {})
      })
      const outcome = yield* transfers
        .ingestFor(owner, transfer)
        .pipe(
          Effect.onExit((exit) =>
            Exit.isFailure(exit) &&
            Option.exists(Cause.failureOption(exit.cause), (e) => e._tag === "NotFound")
              ? Effect.void
              : sandbox.bookIncoming(transfer)
          )
        )
      const sent: Sent = { transfer, outcome }
      return sent
    })

    return { send } as const
  })
}) {}
