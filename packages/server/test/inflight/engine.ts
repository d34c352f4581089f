/**
 * An embedded engine process for the in-flight transfers fault test (`inFlight.test.ts`): the
 * engine's services on a SQLite file with the BIND adapter against a `BindSimulator`, no HTTP.
 *
 *   node --import tsx engine.ts seed   # N merchants, each funded with one payout schedule due now
 *   node --import tsx engine.ts run    # runs `Jobs.runDue` every 100 ms until killed
 *
 * Settings from the environment: FAULT_DB (the SQLite file), FAULT_BIND_URL (the simulator),
 * FAULT_MERCHANTS (N). Each job run prints one JSON line with its payouts report.
 */
import { FetchHttpClient } from "@effect/platform"
import { BindBank } from "@cobro/bank-bind"
import {
  BankAccount,
  Crypto,
  Engine,
  EngineConfig,
  ExchangeRates,
  FeePolicy,
  Ids,
  Jobs,
  Ledger,
  LedgerAccount,
  Money,
  Schedule,
  ScheduleRepository,
  SecondFactor,
  Transactor,
  User,
  UserRepository
} from "@cobro/core"
import { SqliteStorage } from "@cobro/sql-sqlite"
import { DateTime, Duration, Effect, Layer, Option, Redacted } from "effect"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined) throw new Error(`${name} is not set`)
  return value
}

const merchants = Number(env("FAULT_MERCHANTS"))
const bindUrl = env("FAULT_BIND_URL")

/** Merchant i's payout destination (a valid CBU the simulator knows). */
export const destination = (i: number) => BankAccount.makeCbu("0170099", String(i).padStart(13, "0"))
/** Merchant i's funded balance, in centavos. */
export const funded = (i: number) => BigInt(100_000 + i)

const bank = BindBank.layer({
  baseUrl: bindUrl,
  tokenUrl: `${bindUrl}/oauth2/token`,
  clientId: "cobro-sim",
  clientSecret: Redacted.make("sim-secret"),
  scope: "",
  timeout: Duration.millis(300),
  refreshBefore: Duration.minutes(5),
  retries: 1,
  retryBase: Duration.millis(20),
  webhookSecret: Option.none(),
  webhookSecretHeader: "x-bind-webhook-secret"
}).pipe(Layer.provide(FetchHttpClient.layer))

const engine = Engine.services.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      SqliteStorage.layer({ filename: env("FAULT_DB") }),
      bank,
      SecondFactor.layerSandbox,
      FeePolicy.layer(),
      ExchangeRates.layerFixed(),
      Crypto.layerWebCrypto(Crypto.sandboxKey),
      EngineConfig.layer({ transferCheckInterval: Duration.seconds(1) })
    )
  )
)

const seed = Effect.gen(function* () {
  const users = yield* UserRepository.UserRepository
  const schedules = yield* ScheduleRepository.ScheduleRepository
  const ledger = yield* Ledger.Ledger
  const transactor = yield* Transactor.Transactor
  const now = yield* DateTime.now
  for (let i = 1; i <= merchants; i++) {
    const user_id = Ids.UserId.make(`m${i}`)
    yield* transactor.withTransaction(
      Effect.gen(function* () {
        yield* users.insert(
          new User.User({
            user_id,
            name: `Tienda ${i}`,
            email: `m${i}@example.com`,
            cuit: BankAccount.makeCuit("30", String(71_000_000 + i)),
            account_status: "ACTIVE",
            alias_prefix: null,
            cancellation_period: null,
            cancellation_period_minutes: null,
            automatic_cancellation: false,
            transfer_tolerance: Money.zero("ARS"),
            payout_schedule: null,
            partner_id: null,
            creation_timestamp: now,
            last_modified_timestamp: now
          })
        )
        // Money received earlier: at the bank, owed to the merchant.
        const amount = Money.make(funded(i), "ARS")
        yield* ledger.post({
          kind: "test.funding",
          reference: user_id,
          postings: [
            Ledger.debit(LedgerAccount.bankClearing, amount),
            Ledger.credit(LedgerAccount.merchantAvailable(user_id), amount)
          ]
        })
        yield* schedules.insert(
          new Schedule.PayoutSchedule({
            schedule_id: Ids.ScheduleId.make(`sch_m${i}`),
            schedule_type: "payout",
            frequency: "daily",
            schedule_status: "active",
            next_run_date: now,
            creation_timestamp: now,
            user_id,
            payload: new Schedule.SchedulePayload({
              address: BankAccount.PayoutAddress.make(destination(i))
            }),
            partner_id: Ids.PartnerId.make("p1"),
            last_modified_timestamp: now
          })
        )
      })
    )
  }
  console.log(JSON.stringify({ seeded: merchants }))
})

const run = Effect.gen(function* () {
  const jobs = yield* Jobs.Jobs
  while (true) {
    const report = yield* jobs.runDue()
    console.log(JSON.stringify({ payouts: report.payouts }))
    yield* Effect.sleep("100 millis")
  }
})

const program: Effect.Effect<void, unknown, Layer.Layer.Success<typeof engine>> = process.argv[2] === "seed"
  ? seed
  : run
Effect.runPromise(Effect.provide(program, engine)).catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
