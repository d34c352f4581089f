/**
 * The sandbox faucet: simulates a transfer from a payer to one of the caller's CVUs and ingests
 * it exactly as a real bank notification would be.
 */
import { Cause, Effect, Either, Exit, Option, Schema } from "effect"
import { Cuit, type Cvu, isValidCbu } from "../bank/BankAccount.js"
import { InvalidInput } from "../Errors.js"
import type { UserId } from "../Ids.js"
import * as Money from "../Money.js"
import { SandboxBank } from "../bank/SandboxBank.js"
import { Transfers } from "./Transfers.js"
import { Class } from "../internal/schemaClass.js"
import { ArsInputNumber } from "../Wire.js"
import * as Spans from "../Spans.js"

export class FaucetRequest extends Class<FaucetRequest>("FaucetRequest")({
  /** Pesos, as a JSON number with at most 2 decimals; parsed by `send` (`Money.fromInput`). */
  amount: ArsInputNumber,
  /** The simulated sender's CUIT. */
  cuit: Schema.optional(Cuit),
  /**
   * The simulated sender's account (a CBU, or a CVU): where a refund of this transfer goes. A
   * random valid CBU when absent, so every sandbox transfer has a sender account.
   */
  cbu: Schema.optional(
    Schema.String.pipe(Schema.filter(isValidCbu, { message: () => "must be a valid 22-digit CBU or CVU" }))
  )
}) {}

export class Faucet extends Effect.Service<Faucet>()("@cobro/core/Faucet", {
  effect: Effect.gen(function* () {
    const sandbox = yield* SandboxBank
    const transfers = yield* Transfers

    /**
     * The transfer is drawn (numbered and sealed by the sandbox bank), then ingested for the
     * caller only (`ingestFor`: whether the CVU is one of the caller's is decided in the unit of
     * work that credits, on the directory's entry it locks, with no statement of its own), then
     * booked in the bank's statement. A CVU that is not the caller's answers `NotFound` and
     * leaves nothing, in the engine or the bank. Any other end (credited, bounced, a duplicate,
     * a failure, the caller gone) books it: the bank received the money, and reconciliation reads
     * the statement for notifications the engine missed.
     */
    const send = Spans.fn("Faucet.send")(function* (owner: UserId, cvu: Cvu, request: FaucetRequest) {
      const amount = yield* Either.mapLeft(Money.fromInput(request.amount, "ARS"), (e) =>
        InvalidInput.of("amount", e.message)
      )
      if (amount.minor <= 0n) return yield* InvalidInput.of("amount", "must be positive")
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
      return { transfer, outcome } as const
    })

    return { send } as const
  })
}) {}
