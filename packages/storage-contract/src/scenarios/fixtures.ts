import {
  BankAccount,
  EngineConfig,
  Errors,
  Ids,
  Jobs,
  Ledger,
  Money,
  PaymentRequest,
  User
} from "@cobro/core"
import { SandboxBank } from "@cobro/bank-sandbox"
import { UserRepository } from "@cobro/core/ports"
import { DateTime, Effect, Schema, TestClock } from "effect"

export const u1 = Ids.UserId.make("u1")
export const u2 = Ids.UserId.make("u2")

export const seedUser = (
  overrides: Partial<ConstructorParameters<typeof User.User>[0]> = {}
): Effect.Effect<User.User, Errors.Conflict, UserRepository.UserRepository> =>
  Effect.gen(function* () {
    const now = yield* DateTime.now
    const user = new User.User({
      user_id: u1,
      name: "Tienda Uno",
      email: "uno@example.com",
      cuit: BankAccount.makeCuit("30", "71234567"),
      account_status: "ACTIVE",
      ...User.initialSettings(),
      partner_id: null,
      creation_timestamp: now,
      last_modified_timestamp: now,
      ...overrides
    })
    yield* (yield* UserRepository.UserRepository).insert(user)
    return user
  })

export const ars = (minor: bigint) => Money.make(minor, "ARS")

/** A builder of `schema`'s requests: `defaults` decoded as the API would, with `fields` over them. */
export const requestWith =
  <A, I>(schema: Schema.Schema<A, I>, defaults: Record<string, unknown>) =>
  (fields: Record<string, unknown> = {}): A =>
    Schema.decodeUnknownSync(schema)({ ...defaults, ...fields })

export const createRequest = requestWith(PaymentRequest.CreatePaymentRequest, {
  user_id: "u1",
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"]
})

export const expectLedgerOk = Effect.gen(function* () {
  const report = yield* (yield* Ledger.Ledger).verify()
  if (report.problems.length > 0)
    return yield* Effect.dieMessage(`ledger problems:\n${report.problems.join("\n")}`)
})

/** Runs the work due now, as the host's job loop does. */
export const runDue: Effect.Effect<Jobs.RunReport, unknown, Jobs.Jobs> = Effect.flatMap(Jobs.Jobs, (jobs) =>
  jobs.runDue()
)

/** The transfers the sandbox bank was asked to send, in order. */
export const books: Effect.Effect<
  ReadonlyArray<SandboxBank.SentTransfer>,
  never,
  SandboxBank.SandboxBank
> = Effect.flatMap(SandboxBank.SandboxBank, (bank) => bank.sentTransfers)

/** Moves the test clock to the next check of the transfers in flight. */
export const checkLater: Effect.Effect<void, never, EngineConfig.EngineConfig> = Effect.flatMap(
  EngineConfig.EngineConfig,
  (c) => TestClock.adjust(c.transferCheckInterval)
)
