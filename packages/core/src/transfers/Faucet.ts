/**
 * The sandbox faucet: simulates a transfer from a payer to one of the caller's CVUs and ingests
 * it exactly as a real bank notification would be.
 */
import { Effect, Either, Exit, Option, Schema } from "effect"
import { Cuit, type Cvu, isValidCbu } from "../bank/BankAccount.js"
import { NotFound, InvalidInput } from "../Errors.js"
import type { UserId } from "../Ids.js"
import * as Money from "../Money.js"
import { SandboxBank } from "../bank/SandboxBank.js"
import { CvuDirectory } from "./CvuDirectory.js"
import { Transfers } from "./Transfers.js"
import { Class } from "../internal/schemaClass.js"
import * as GroupCommit from "../internal/groupCommit.js"
import { Transactor } from "../Transactor.js"
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
    const directory = yield* CvuDirectory
    const transactor = yield* Transactor

    /**
     * The entries of CVUs asked for together: the checks of concurrent calls read in one
     * statement (group commit, `internal/groupCommit.ts`). On Postgres the check was a round trip
     * of its own on every transfer, a third of a faucet transfer's statements (bench/results.md).
     * Used where the directory says reads together pay (`readsTogether`).
     */
    const findTogether = GroupCommit.make({
      batchSize: 100,
      run: (cvus: ReadonlyArray<Cvu>) =>
        Effect.map(directory.findAll(cvus), (entries) => {
          const byCvu = new Map(entries.map((e) => [e.cvu as string, e]))
          return cvus.map((cvu) => Exit.succeed(Option.fromNullable(byCvu.get(cvu))))
        })
    })

    /**
     * Whether `cvu` is one of the owner's CVUs (a payment's, a fixed customer's or a split's).
     * Inside a caller's unit of work it reads in it, alone: a batch runs in its leader's fiber.
     */
    const owns = (owner: UserId, cvu: Cvu) =>
      Effect.map(
        directory.readsTogether
          ? Effect.flatMap(transactor.inTransaction, (inside) =>
              inside ? directory.find(cvu) : findTogether(cvu)
            )
          : directory.find(cvu),
        Option.exists((entry) => entry.user_id === owner)
      )

    const send = Spans.fn("Faucet.send")(function* (owner: UserId, cvu: Cvu, request: FaucetRequest) {
      const amount = yield* Either.mapLeft(Money.fromInput(request.amount, "ARS"), (e) =>
        InvalidInput.of("amount", e.message)
      )
      if (amount.minor <= 0n) return yield* InvalidInput.of("amount", "must be positive")
      if (!(yield* owns(owner, cvu))) return yield* NotFound.of("cvu", cvu)
      const transfer = yield* sandbox.simulateIncoming({
        cvu,
        amount,
        ...(request.cuit ? { senderCuit: request.cuit } : {}),
        ...(request.cbu ? { senderAccount: request.cbu } : {})
      })
      const outcome = yield* transfers.ingest(transfer)
      return { transfer, outcome } as const
    })

    return { send } as const
  })
}) {}
