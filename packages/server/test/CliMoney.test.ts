/**
 * `cobro users balance` and `cobro payouts list` on SQLite and Postgres: a merchant's balance
 * after a paid payment, its payouts newest first a page at a time, and the input errors.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount, Ids, Money, PaymentRequest, Payments, Schedule, Transfers } from "@cobro/core"
import { ScheduleRepository } from "@cobro/core/ports"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { DateTime, Effect, type Layer, Schema } from "effect"
import { Services } from "../src/index.js"
import { SandboxBank } from "@cobro/bank-sandbox"
import { cli, cliJson, configOf, failureOf, tempDb } from "./support.js"

const pg = await Effect.runPromise(pgAvailable)

/** `effect` over the sandbox engine of the database in `env` (the sandbox bank included). */
const withEngine = <A, E>(
  env: Record<string, string>,
  effect: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof Services.layerSandbox>>>
) => Effect.flatMap(configOf(env), (config) => Effect.provide(effect, Services.layerSandbox(config)))

const sqlite = Effect.map(tempDb, (file) => ({ COBRO_DATABASE_URL: `file:${file}` }))
const postgres = Effect.map(freshPgUrl, (url) => ({ COBRO_DATABASE_URL: url }))

/** A paid payment of 1000.00 (987.90 after fees) and two payouts of a schedule, a minute apart. */
const seed = (env: Record<string, string>) =>
  withEngine(
    env,
    Effect.gen(function* () {
      const payment = yield* (yield* Payments.Payments).create(
        Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
          user_id: "m_shop",
          price: { amount: 1000, currency: "ARS" },
          payment_options: ["transfer"]
        })
      )
      const transfer = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
        cvu: payment.cvu,
        amount: Money.make(100000n, "ARS")
      })
      yield* (yield* Transfers.Transfers).ingest(transfer)
      const repo = yield* ScheduleRepository.ScheduleRepository
      const base = DateTime.unsafeMake(Date.UTC(2026, 0, 5, 3))
      for (const [n, status] of [
        [1, "SUCCESS"],
        [2, "FAILED"]
      ] as const) {
        const at = DateTime.add(base, { minutes: n })
        yield* repo.insertPayout(
          new Schedule.Payout({
            payout_id: Ids.PayoutId.make(`po_test${n}`),
            schedule_id: Ids.ScheduleId.make("sch_test"),
            user_id: Ids.UserId.make("m_shop"),
            address: BankAccount.PayoutAddress.make(BankAccount.makeCbu("2850590", "0000000012345")),
            amount: Money.make(BigInt(n) * 10000n, "ARS"),
            payout_status: status,
            bank_transaction_id: status === "SUCCESS" ? Ids.BankTransactionId.make(`bank-${n}`) : null,
            error: status === "FAILED" ? "account closed" : null,
            attempts: 1,
            attempted_at: at,
            creation_timestamp: at,
            last_modified_timestamp: at
          })
        )
      }
    })
  )

const moneyCommands = (env: Record<string, string>) =>
  Effect.gen(function* () {
    yield* cliJson(
      [
        "users",
        "create",
        "--name",
        "Tienda M",
        "--email",
        "m_shop@example.com",
        "--cuit",
        BankAccount.makeCuit("30", "71234567"),
        "--user-id",
        "m_shop",
        "--status",
        "ACTIVE"
      ],
      env
    )
    expect(yield* cliJson(["users", "balance", "m_shop"], env)).toEqual({
      user_id: "m_shop",
      balances: [{ currency: "ARS", available: "0.00", in_transit: "0.00" }]
    })
    expect((yield* cli(["payouts", "list", "--user-id", "m_shop"], env)).stdout).toBe("no payouts")
    yield* seed(env)

    expect(yield* cliJson(["users", "balance", "m_shop"], env)).toEqual({
      user_id: "m_shop",
      balances: [{ currency: "ARS", available: "987.90", in_transit: "0.00" }]
    })
    const human = (yield* cli(["users", "balance", "m_shop"], env)).stdout.split("\n")
    expect(human[0]).toMatch(/^CURRENCY +AVAILABLE +IN_TRANSIT$/)
    expect(human[1]).toMatch(/^ARS +987\.90 +0\.00$/)

    const all = (yield* cliJson(["payouts", "list", "--user-id", "m_shop"], env)) as Record<string, unknown>
    expect(all).toEqual({
      payouts: [
        {
          payout_id: "po_test2",
          kind: "schedule",
          amount: "200.00",
          currency: "ARS",
          destination: BankAccount.makeCbu("2850590", "0000000012345"),
          status: "FAILED",
          failure_reason: "account closed",
          schedule_id: "sch_test",
          creation_timestamp: "2026-01-05T03:02:00.000Z",
          executed_timestamp: "2026-01-05T03:02:00.000Z"
        },
        {
          payout_id: "po_test1",
          kind: "schedule",
          amount: "100.00",
          currency: "ARS",
          destination: BankAccount.makeCbu("2850590", "0000000012345"),
          status: "SUCCESS",
          bank_reference: "bank-1",
          schedule_id: "sch_test",
          creation_timestamp: "2026-01-05T03:01:00.000Z",
          executed_timestamp: "2026-01-05T03:01:00.000Z"
        }
      ]
    })
    const first = (yield* cliJson(["payouts", "list", "--user-id", "m_shop", "--limit", "1"], env)) as {
      payouts: ReadonlyArray<{ payout_id: string }>
      next_cursor: string
    }
    expect(first.payouts.map((p) => p.payout_id)).toEqual(["po_test2"])
    const second = (yield* cliJson(
      ["payouts", "list", "--user-id", "m_shop", "--limit", "1", "--cursor", first.next_cursor],
      env
    )) as Record<string, unknown>
    expect(second).toEqual({ payouts: [(all["payouts"] as Array<unknown>)[1]] })
    const table = (yield* cli(["payouts", "list", "--user-id", "m_shop", "--limit", "1"], env)).stdout
    expect(table.split("\n")[0]).toMatch(
      /^PAYOUT_ID +KIND +STATUS +AMOUNT +DESTINATION +BANK_REFERENCE +CREATED$/
    )
    expect(table).toContain(`more: --cursor ${first.next_cursor}`)
    expect((yield* cli(["payouts", "list", "--user-id", "m_shop", "--kind", "split"], env)).stdout).toBe(
      "no payouts"
    )

    expect(failureOf(yield* cli(["users", "balance", "nobody"], env))).toBe(
      "user.not.found: user nobody not found"
    )
    expect(failureOf(yield* cli(["payouts", "list", "--user-id", "nobody"], env))).toBe(
      "user.not.found: user nobody not found"
    )
    expect(
      failureOf(yield* cli(["payouts", "list", "--user-id", "m_shop", "--kind", "refunds"], env))
    ).toMatch(/^request\.invalid \(kind\): must be one of schedule, split, refund/)
    expect(failureOf(yield* cli(["payouts", "list", "--user-id", "m_shop", "--limit", "0"], env))).toMatch(
      /^request\.invalid \(limit\)/
    )
    expect(failureOf(yield* cli(["payouts", "list", "--user-id", "m_shop", "--cursor", "xyz"], env))).toMatch(
      /^request\.invalid \(cursor\)/
    )
  })

describe("cobro CLI: a merchant's money", () => {
  it.scoped("users balance, payouts list: SQLite", () => Effect.flatMap(sqlite, moneyCommands), 60_000)
  it.scoped.skipIf(!pg)(
    "users balance, payouts list: Postgres",
    () => Effect.flatMap(postgres, moneyCommands),
    60_000
  )
})
