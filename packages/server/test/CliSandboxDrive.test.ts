/**
 * `cobro users rotate-secret`, `cobro sandbox pay` and `cobro sandbox clock` against a running
 * server on the same database (a SQLite file, and Postgres): what the commands change is what
 * the server answers.
 */
import { describe, expect, it } from "@effect/vitest"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { Effect, Exit } from "effect"
import { cli, cliJson, configOf, failureOf, get, postJson, serverLayer, tempDb } from "./support.js"

const pg = await Effect.runPromise(pgAvailable)

type Env = Record<string, string>

const createUser = (env: Env, user_id: string) =>
  Effect.map(
    cliJson(
      [
        "users",
        "create",
        "--name",
        `Tienda ${user_id}`,
        "--email",
        `${user_id}@example.com`,
        "--cuit",
        "30712345671",
        "--user-id",
        user_id,
        "--status",
        "ACTIVE",
        "--alias-prefix",
        user_id.replace("tienda_", "t")
      ],
      env
    ),
    (created) => ({
      client_id: created["client_id"] as string,
      client_secret: created["client_secret"] as string
    })
  )

const issue = (user_id: string, client_id: string, client_secret: string) =>
  postJson(`/users/${user_id}/tokens`, { client_id, client_secret })

const createPayment = (user_id: string, external_id: string, amount = 1500) =>
  Effect.map(
    postJson("/payments/", {
      user_id,
      external_id,
      price: { amount, currency: "ARS" },
      payment_options: ["transfer"]
    }),
    (r) => {
      expect(r.status).toBe(200)
      const data = r.body["data"] as {
        readonly id: string
        readonly quotes: ReadonlyArray<{ readonly cvu: string }>
      }
      return { id: data.id, cvu: data.quotes[0]!.cvu }
    }
  )

const statusOf = (id: string) =>
  Effect.map(
    get(`/payments/${id}/public`),
    (r) => (r.body["data"] as { payment_status: string }).payment_status
  )

/** Runs `body` with a sandbox server on `env`'s database (its jobs hourly: the commands do the work). */
const withServer = <A, E, R>(env: Env, body: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const config = yield* configOf({ ...env, COBRO_JOB_INTERVAL: "1 hour", COBRO_RATE_LIMITS: "false" })
    return yield* body.pipe(Effect.provide(serverLayer(config)))
  })

const scenario = (database: Effect.Effect<string, never, import("effect").Scope.Scope>) =>
  Effect.gen(function* () {
    const env: Env = { COBRO_DATABASE_URL: yield* database, COBRO_MODE: "sandbox" }
    yield* cli(["migrate"], env)
    const a = yield* createUser(env, "tienda_a")
    yield* createUser(env, "tienda_b")
    yield* withServer(
      env,
      Effect.gen(function* () {
        // rotate-secret: the old secret and its token stop, the new secret issues tokens.
        const before = yield* issue("tienda_a", a.client_id, a.client_secret)
        expect(before.status).toBe(200)
        const oldToken = (before.body["data"] as { token: string }).token
        expect((yield* get("/payments/?user_id=tienda_a", oldToken)).status).toBe(200)
        const rotated = yield* cliJson(["users", "rotate-secret", "--user-id", "tienda_a"], env)
        expect(rotated["client_id"]).toBe(a.client_id)
        expect(rotated["client_secret"]).not.toBe(a.client_secret)
        expect((yield* issue("tienda_a", a.client_id, a.client_secret)).status).toBe(401)
        // The running server reads tokens through a one-second cache (another process revoked it).
        yield* Effect.sleep("1100 millis")
        expect((yield* get("/payments/?user_id=tienda_a", oldToken)).status).toBe(401)
        const fresh = yield* issue("tienda_a", a.client_id, rotated["client_secret"] as string)
        expect(fresh.status).toBe(200)
        const printed = yield* cli(["users", "rotate-secret", "--user-id", "tienda_a"], env)
        expect(printed.stdout).toMatch(/client_secret: cs_\S+/)
        expect(failureOf(yield* cli(["users", "rotate-secret", "--user-id", "nobody"], env))).toContain(
          "user.not.found"
        )

        // sandbox pay by payment id: a partial amount, then what is left: SUCCESS.
        const first = yield* createPayment("tienda_a", "pay-1")
        const partial = yield* cliJson(["sandbox", "pay", first.id, "--amount", "500.50"], env)
        expect(partial).toMatchObject({
          outcome: "Credited",
          amount: "500.50",
          target: "payment",
          user_id: "tienda_a"
        })
        expect(yield* statusOf(first.id)).not.toBe("SUCCESS")
        const rest = yield* cliJson(["sandbox", "pay", first.id], env)
        expect(rest).toMatchObject({ outcome: "Credited", amount: "999.50", payment_status: "SUCCESS" })
        expect(yield* statusOf(first.id)).toBe("SUCCESS")
        // By CVU, printed for people.
        const second = yield* createPayment("tienda_b", "pay-2", 700)
        const byCvu = yield* cli(["sandbox", "pay", second.cvu], env)
        expect(Exit.isSuccess(byCvu.exit), failureOf(byCvu)).toBe(true)
        expect(byCvu.stdout).toContain(`sent 700.00 ARS to ${second.cvu} (payment ${second.id} of tienda_b)`)
        expect(yield* statusOf(second.id)).toBe("SUCCESS")
        // A customer's CVU: any amount, so --amount is required.
        // (The second rotation above revoked `fresh`'s token: a token of the printed secret.)
        const printedSecret = /client_secret: (cs_\S+)/.exec(printed.stdout)![1]!
        const latest = yield* issue("tienda_a", a.client_id, printedSecret)
        expect(latest.status).toBe(200)
        const token = (latest.body["data"] as { token: string }).token
        const customer = yield* postJson(
          "/customers/",
          { user_id: "tienda_a", alias: "cliente", customer_id: "c-1", name: "Cliente" },
          token
        )
        expect(customer.status, JSON.stringify(customer.body)).toBe(200)
        const customerCvu = (customer.body["data"] as { bank_info: { cvu: string } }).bank_info.cvu
        expect(failureOf(yield* cli(["sandbox", "pay", customerCvu], env))).toContain("(amount)")
        const toCustomer = yield* cliJson(["sandbox", "pay", customerCvu, "--amount", "250"], env)
        expect(toCustomer).toMatchObject({
          outcome: "Credited",
          target: "customer",
          target_id: "c-1",
          user_id: "tienda_a",
          amount: "250.00"
        })
        // Refusals: a bad amount, an unknown payment or CVU.
        expect(failureOf(yield* cli(["sandbox", "pay", second.id, "--amount", "-3"], env))).toContain(
          "(amount)"
        )
        expect(failureOf(yield* cli(["sandbox", "pay", "VAR-tienda_a-nope"], env))).toContain(
          "payment.not.found"
        )
        expect(failureOf(yield* cli(["sandbox", "pay", "0000003100000000000001"], env))).toMatch(/cvu/)

        // sandbox clock advance 6d expires the merchant's PENDING payment, not another's.
        const pendingA = yield* createPayment("tienda_a", "clock-a")
        const pendingB = yield* createPayment("tienda_b", "clock-b")
        const advanced = yield* cliJson(["sandbox", "clock", "advance", "6d", "--user-id", "tienda_a"], env)
        expect(advanced).toMatchObject({ user_id: "tienda_a", expired: 1 })
        expect(advanced["offset_seconds"]).toBeGreaterThanOrEqual(6 * 86_400)
        expect(yield* statusOf(pendingA.id)).toBe("EXPIRED")
        expect(yield* statusOf(pendingB.id)).toBe("PENDING")
        // --to an instant, then a read.
        const target = new Date(Date.now() + 10 * 86_400_000).toISOString()
        const moved = yield* cliJson(["sandbox", "clock", "--to", target, "--user-id", "tienda_a"], env)
        expect(Date.parse(moved["now"] as string)).toBeGreaterThanOrEqual(Date.parse(target))
        const read = yield* cliJson(["sandbox", "clock", "--user-id", "tienda_a"], env)
        expect(read["offset_seconds"]).toBeGreaterThanOrEqual(10 * 86_400 - 60)
        const other = yield* cliJson(["sandbox", "clock", "--user-id", "tienda_b"], env)
        expect(other["offset_seconds"]).toBe(0)
        // Backwards, or not a duration: refused, saying why.
        expect(
          failureOf(
            yield* cli(["sandbox", "clock", "--to", "2020-01-01T00:00:00Z", "--user-id", "tienda_a"], env)
          )
        ).toContain("(to)")
        expect(
          failureOf(yield* cli(["sandbox", "clock", "advance", "soon", "--user-id", "tienda_a"], env))
        ).toContain("not a duration")
      })
    )

    // Production refuses both sandbox commands, before touching anything (on a database of its
    // own: this sandbox database refuses production mode before any command runs).
    const production = {
      COBRO_DATABASE_URL: yield* database,
      COBRO_MODE: "production",
      COBRO_SECRET_KEY: "a".repeat(64)
    }
    expect(Exit.isSuccess((yield* cli(["migrate"], production)).exit)).toBe(true)
    expect(failureOf(yield* cli(["sandbox", "pay", "VAR-tienda_a-pay-1"], production))).toContain(
      "only in sandbox mode (COBRO_MODE=sandbox)"
    )
    expect(
      failureOf(yield* cli(["sandbox", "clock", "advance", "6d", "--user-id", "tienda_a"], production))
    ).toContain("only in sandbox mode (COBRO_MODE=sandbox)")
  })

describe("cobro users rotate-secret, sandbox pay, sandbox clock", () => {
  it.scopedLive(
    "against a running server: SQLite file",
    () => scenario(Effect.map(tempDb, (file) => `file:${file}`)),
    120_000
  )
  it.scopedLive.skipIf(!pg)("against a running server: Postgres", () => scenario(freshPgUrl), 120_000)
})
