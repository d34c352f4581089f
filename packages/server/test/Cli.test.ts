import { describe, expect, it } from "@effect/vitest"
import {
  Auth,
  BankAccount,
  Crypto,
  Ids,
  Ledger,
  LedgerAccount,
  Money,
  PaymentRequest,
  Payments,
  Principal,
  Split,
  Splits
} from "@cobro/core"
import { PartnerRepository, UserRepository } from "@cobro/core/ports"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { SqlClient } from "@effect/sql"
import { NodeTransport, Webhooks } from "@cobro/webhooks"
import { Effect, Exit, Layer, Option, Schema } from "effect"
import { Services } from "../src/index.js"
import { Faucet, SandboxBank } from "@cobro/bank-sandbox"
import * as fs from "node:fs"
import * as path from "node:path"
import { cli, cliJson, configOf, failureOf, tempDb, tempDir } from "./support.js"

const cuit = BankAccount.makeCuit("30", "71234567")

const pg = await Effect.runPromise(pgAvailable)
if (!pg) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(`\n!!! Postgres at ${pgAdminUrl} is not reachable: the CLI's Postgres test is SKIPPED !!!\n`)
}

/** The services over the database `env` names, for checking what a command did. */
const withEngine = <A, E>(env: Record<string, string>, effect: Effect.Effect<A, E, Services.Services>) =>
  Effect.flatMap(configOf(env), (config) => Effect.provide(effect, Services.layer(config)))

const envFor = (file: string) => ({ COBRO_DATABASE_URL: `file:${file}` })

describe("cobro CLI", () => {
  it.scoped("migrate creates the schema, then finds it up to date", () =>
    Effect.gen(function* () {
      const env = envFor(yield* tempDb)
      const first = yield* cli(["migrate"], env)
      expect(Exit.isSuccess(first.exit)).toBe(true)
      expect(first.stdout).toMatch(/applied 0001_payments, .*0008_sandbox_clock/)
      const second = yield* cli(["migrate"], env)
      expect(second.stdout).toMatch(/is up to date$/)
    })
  )

  it.scoped("users create --json prints credentials that issue a token", () =>
    Effect.gen(function* () {
      const env = envFor(yield* tempDb)
      const created = yield* cliJson(
        ["users", "create", "--name", "Tienda Uno", "--email", "uno@example.com", "--cuit", "30-71234567-1"],
        env
      )
      expect(Object.keys(created).sort()).toEqual(["client_id", "client_secret", "user_id"])
      const userId = Ids.UserId.make(String(created["user_id"]))
      const token = yield* withEngine(
        env,
        Effect.flatMap(Auth.Auth, (auth) =>
          auth.issueUserToken(
            userId,
            new Auth.TokenRequest({
              client_id: String(created["client_id"]),
              client_secret: String(created["client_secret"])
            })
          )
        )
      )
      expect(token.token).toMatch(/^USR-/)
      const wrong = yield* withEngine(
        env,
        Effect.flip(
          Effect.flatMap(Auth.Auth, (auth) =>
            auth.issueUserToken(
              userId,
              new Auth.TokenRequest({ client_id: String(created["client_id"]), client_secret: "cs_wrong" })
            )
          )
        )
      )
      expect(wrong.key).toBe("auth.credentials.invalid")
      // PENDING by default
      const user = yield* withEngine(
        env,
        Effect.flatMap(UserRepository.UserRepository, (u) => u.findById(userId))
      )
      expect(Option.map(user, (u) => u.account_status)).toEqual(Option.some("PENDING"))
    })
  )

  it.scoped("users create with a user id, an alias prefix and a status; human output shows the secret", () =>
    Effect.gen(function* () {
      const env = envFor(yield* tempDb)
      const result = yield* cli(
        [
          "users",
          "create",
          "--name",
          "Tienda Dos",
          "--email",
          "dos@example.com",
          "--cuit",
          cuit,
          "--user-id",
          "tienda_dos",
          "--alias-prefix",
          "dos",
          "--status",
          "ACTIVE"
        ],
        env
      )
      expect(Exit.isSuccess(result.exit)).toBe(true)
      expect(result.stdout).toMatch(
        /^created user tienda_dos\n {2}client_id: {5}cli_\w+\n {2}client_secret: cs_/
      )
      const user = yield* withEngine(
        env,
        Effect.flatMap(UserRepository.UserRepository, (u) => u.findById(Ids.UserId.make("tienda_dos")))
      )
      expect(Option.map(user, (u) => [u.account_status, u.alias_prefix])).toEqual(
        Option.some(["ACTIVE", "dos"])
      )
    })
  )

  it.scoped("users create refuses bad input with the field, and a taken prefix leaves no user behind", () =>
    Effect.gen(function* () {
      const env = envFor(yield* tempDb)
      const bad = yield* cli(
        ["users", "create", "--name", "X", "--email", "x@example.com", "--cuit", "123"],
        env
      )
      expect(Exit.isFailure(bad.exit)).toBe(true)
      expect(failureOf(bad)).toBe("request.invalid (cuit): must be 11 digits, got 3")

      yield* cliJson(
        [
          "users",
          "create",
          "--name",
          "A",
          "--email",
          "a@example.com",
          "--cuit",
          cuit,
          "--alias-prefix",
          "shop"
        ],
        env
      )
      const taken = yield* cli(
        [
          "users",
          "create",
          "--name",
          "B",
          "--email",
          "b@example.com",
          "--cuit",
          cuit,
          "--user-id",
          "user_b",
          "--alias-prefix",
          "shop"
        ],
        env
      )
      expect(Exit.isFailure(taken.exit)).toBe(true)
      expect(failureOf(taken)).toMatch(/^user\.alias_prefix\.taken: /)
      const userB = yield* withEngine(
        env,
        Effect.flatMap(UserRepository.UserRepository, (u) => u.findById(Ids.UserId.make("user_b")))
      )
      expect(Option.isNone(userB)).toBe(true)
    })
  )

  it.scoped("partners create --json prints the partner's id and credentials", () =>
    Effect.gen(function* () {
      const env = envFor(yield* tempDb)
      const created = yield* cliJson(
        [
          "partners",
          "create",
          "--name",
          "Socio SA",
          "--redirect-url",
          "https://socio.example.com/callback",
          "--webhook-url",
          "https://socio.example.com/hooks"
        ],
        env
      )
      expect(Object.keys(created).sort()).toEqual([
        "client_id",
        "client_secret",
        "onboarding_url",
        "partner_id"
      ])
      const stored = yield* withEngine(
        env,
        Effect.gen(function* () {
          const partners = yield* PartnerRepository.PartnerRepository
          const crypto = yield* Crypto.Crypto
          const partner = yield* partners.findById(Ids.PartnerId.make(String(created["partner_id"])))
          if (Option.isNone(partner)) return Option.none()
          const secret = yield* crypto.decrypt(partner.value.client_secret_sealed, partner.value.client_id)
          return Option.some({ ...partner.value, secret })
        })
      )
      expect(Option.isSome(stored)).toBe(true)
      const partner = Option.getOrThrow(stored)
      expect(partner.client_id).toBe(created["client_id"])
      expect(partner.secret).toBe(created["client_secret"])
      expect(partner.client_secret_sealed).not.toContain(String(created["client_secret"]))
      expect(partner.webhook_url).toBe("https://socio.example.com/hooks")
      expect(partner.redirect_url).toBe("https://socio.example.com/callback")

      const bad = yield* cli(["partners", "create", "--name", "Y", "--redirect-url", "not a url"], env)
      expect(failureOf(bad)).toMatch(/\(redirect_url\)/)
    })
  )

  it.scoped("accounts set-status moves an account and refuses an illegal move", () =>
    Effect.gen(function* () {
      const env = envFor(yield* tempDb)
      const { user_id } = yield* cliJson(
        ["users", "create", "--name", "C", "--email", "c@example.com", "--cuit", cuit],
        env
      )
      const activated = yield* cliJson(["accounts", "set-status", String(user_id), "ACTIVE"], env)
      expect(activated).toEqual({ user_id, account_status: "ACTIVE" })
      const user = yield* withEngine(
        env,
        Effect.flatMap(UserRepository.UserRepository, (u) => u.findById(Ids.UserId.make(String(user_id))))
      )
      expect(Option.map(user, (u) => u.account_status)).toEqual(Option.some("ACTIVE"))

      const human = yield* cli(["accounts", "set-status", String(user_id), "suspended"], env)
      expect(human.stdout).toBe(`${user_id} is SUSPENDED`)

      const illegal = yield* cli(["accounts", "set-status", String(user_id), "PENDING"], env)
      expect(failureOf(illegal)).toMatch(/^account\.status\.transition\.invalid: /)
      const unknown = yield* cli(["accounts", "set-status", "nobody", "ACTIVE"], env)
      expect(failureOf(unknown)).toMatch(/^user\.not\.found: /)
      const badStatus = yield* cli(["accounts", "set-status", String(user_id), "CLOSED"], env)
      expect(failureOf(badStatus)).toMatch(
        /^request\.invalid \(status\): must be one of ACTIVE, PENDING, REJECTED, SUSPENDED, got "CLOSED"$/
      )
      // A malformed id is refused as such (no stack trace), wherever the operator types one.
      for (const args of [
        ["accounts", "set-status", "bad\u0001id", "ACTIVE"],
        ["webhooks", "list", "--user-id", "x".repeat(300)],
        ["webhooks", "replay", "evt\u0007"]
      ]) {
        const refused = yield* cli(args, env)
        expect(Exit.isFailure(refused.exit), args.join(" ")).toBe(true)
        expect(failureOf(refused), args.join(" ")).toMatch(/^request\.invalid \((user_id|event_id)\): /)
      }
    })
  )

  it.scoped("ledger verify passes after money moved and fails when a balance is tampered with", () =>
    Effect.gen(function* () {
      const env = envFor(yield* tempDb)
      const { user_id } = yield* cliJson(
        ["users", "create", "--name", "D", "--email", "d@example.com", "--cuit", cuit, "--status", "ACTIVE"],
        env
      )
      yield* withEngine(
        env,
        Effect.gen(function* () {
          const payments = yield* Payments.Payments
          const faucet = yield* Faucet.Faucet
          const payment = yield* payments.create(
            Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
              user_id,
              price: { amount: 1500, currency: "ARS" },
              payment_options: ["transfer"]
            })
          )
          yield* faucet.send(
            payment.user_id,
            payment.quotes[0]!.address,
            new Faucet.FaucetRequest({ amount: 1500 })
          )
        }) as Effect.Effect<void, unknown, Services.Services>
      )
      const ok = yield* cliJson(["ledger", "verify"], env)
      expect(ok["ok"]).toBe(true)
      expect(ok["problems"]).toEqual([])
      expect(ok["entries"]).toBe(1)
      const human = yield* cli(["ledger", "verify"], env)
      expect(human.stdout).toMatch(/^ledger OK: 1 entries, \d+ accounts/)

      yield* withEngine(
        env,
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql`UPDATE cobro_ledger_balances SET sum_minor = sum_minor + 1 WHERE account = 'platform:commission'`
        )
      )
      const broken = yield* cli(["ledger", "verify"], env)
      expect(Exit.isFailure(broken.exit)).toBe(true)
      expect(broken.stdout).toMatch(
        /^ledger has 1 problem\(s\):\n {2}stored balance of platform:commission ARS/
      )
      expect(failureOf(broken)).toBe("the ledger has 1 problem(s)")
    })
  )

  it.scoped("sandbox codes shows the code of an open verification, which the engine accepts", () =>
    Effect.gen(function* () {
      const env = envFor(yield* tempDb)
      const { user_id } = yield* cliJson(
        ["users", "create", "--name", "E", "--email", "e@example.com", "--cuit", cuit, "--status", "ACTIVE"],
        env
      )
      const holder = BankAccount.makeCbu("2850590", "0000000000025")
      const request = yield* withEngine(
        env,
        Effect.gen(function* () {
          const bank = yield* SandboxBank.SandboxBank
          yield* bank.registerHolder({
            account: holder,
            cuit: BankAccount.makeCuit("20", "12345678"),
            name: "Ana"
          })
          const splits = yield* Splits.Splits
          return yield* splits.createAccounts(
            Principal.Principal.User({ user_id: Ids.UserId.make(String(user_id)) }),
            [Schema.decodeUnknownSync(Split.PayoutAccountInput)({ address: holder })]
          )
        }) as Effect.Effect<{ readonly request_id: string }, unknown, Services.Services>
      )
      const empty = yield* cli(["sandbox", "codes", "--user-id", "someone_else"], env)
      expect(empty.stdout).toBe("no payout-account verification is waiting for a code")
      const codes = (yield* cliJson(["sandbox", "codes"], env)) as unknown as ReadonlyArray<
        Record<string, string>
      >
      expect(codes).toHaveLength(1)
      expect(codes[0]!["request_id"]).toBe(request.request_id)
      expect(codes[0]!["user_id"]).toBe(user_id)
      expect(codes[0]!["code"]).toMatch(/^\d{6}$/)
      // Another process (a new engine over the same database) accepts the code.
      const verified = yield* withEngine(
        env,
        Effect.flatMap(Splits.Splits, (splits) =>
          splits.verifyAccounts(
            Principal.Principal.User({ user_id: Ids.UserId.make(String(user_id)) }),
            Schema.decodeUnknownSync(Split.VerifyAccountsRequest)({
              request_id: request.request_id,
              code: codes[0]!["code"]
            })
          )
        ) as Effect.Effect<unknown, unknown, Services.Services>
      )
      expect(verified).toBeDefined()
      const after = yield* cliJson(["sandbox", "codes"], env)
      expect(after).toEqual([])
      // On a production database (this one is a sandbox's, and refuses production mode).
      const productionEnv = {
        ...envFor(yield* tempDb),
        COBRO_MODE: "production",
        COBRO_SECRET_KEY: "a".repeat(64)
      }
      expect(Exit.isSuccess((yield* cli(["migrate"], productionEnv)).exit)).toBe(true)
      const production = yield* cli(["sandbox", "codes"], productionEnv)
      expect(failureOf(production)).toBe("sandbox codes exist only in sandbox mode (COBRO_MODE=sandbox)")
    })
  )

  it.scoped("webhooks list and replay", () =>
    Effect.gen(function* () {
      const env = envFor(yield* tempDb)
      const { partner_id } = yield* cliJson(
        [
          "partners",
          "create",
          "--name",
          "Hooks",
          "--redirect-url",
          "https://hooks.example.com/back",
          "--webhook-url",
          "http://127.0.0.1:9/hooks"
        ],
        env
      )
      const { user_id } = yield* cliJson(
        [
          "users",
          "create",
          "--name",
          "F",
          "--email",
          "f@example.com",
          "--cuit",
          cuit,
          "--partner-id",
          String(partner_id)
        ],
        env
      )
      expect(yield* cliJson(["webhooks", "list"], env)).toEqual([])
      yield* cliJson(["accounts", "set-status", String(user_id), "ACTIVE"], env)
      const listed = (yield* cliJson(
        ["webhooks", "list", "--status", "pending"],
        env
      )) as unknown as ReadonlyArray<Record<string, unknown>>
      expect(listed).toHaveLength(1)
      expect(listed[0]).toMatchObject({
        type: "account.activated",
        user_id,
        webhook_url: "http://127.0.0.1:9/hooks",
        status: "pending",
        attempts: 0
      })
      expect(JSON.parse(String(listed[0]!["body"]))).toEqual({ message: "account_activated", user_id })
      const eventId = String(listed[0]!["event_id"])
      const human = yield* cli(["webhooks", "list"], env)
      expect(human.stdout).toMatch(
        new RegExp(
          `^EVENT_ID +STATUS {3}ATTEMPTS {2}TYPE +WEBHOOK_URL +DETAIL\n${eventId} {2}pending {2}0 {9}account\\.activated`
        )
      )
      expect(yield* cliJson(["webhooks", "list", "--status", "delivered"], env)).toEqual([])

      const replayed = yield* cliJson(["webhooks", "replay", eventId], env)
      expect(replayed).toMatchObject({ event_id: eventId, status: "pending", replays: 1 })
      const missing = yield* cli(["webhooks", "replay", "evt_nope"], env)
      expect(failureOf(missing)).toMatch(/^webhook_delivery\.not\.found: /)
      const badStatus = yield* cli(["webhooks", "list", "--status", "lost"], env)
      expect(Exit.isFailure(badStatus.exit)).toBe(true)
    })
  )

  it.scoped("production: partners create refuses a webhook URL the transport would never contact", () =>
    Effect.gen(function* () {
      const env = { ...envFor(yield* tempDb), COBRO_MODE: "production", COBRO_SECRET_KEY: "ab".repeat(32) }
      const create = (webhookUrl: string) =>
        cli(
          [
            "partners",
            "create",
            "--name",
            "Socio",
            "--redirect-url",
            "https://socio.example.com/back",
            "--webhook-url",
            webhookUrl
          ],
          env
        )
      for (const [url, why] of [
        ["http://127.0.0.1:9/x", "production webhooks must use https"],
        ["https://169.254.169.254/latest", "169.254.169.254 is a link-local address"],
        ["https://[::ffff:127.0.0.1]/x", "::ffff:7f00:1 is a loopback address"],
        ["https://0x7f.1/x", "127.0.0.1 is a loopback address"],
        ["https://localhost/x", "localhost is a loopback name"]
      ] as const) {
        const refused = yield* create(url)
        expect({ url, failure: failureOf(refused) }).toEqual({
          url,
          failure: expect.stringMatching(/^request\.invalid \(webhook_url\): /)
        })
        expect(failureOf(refused)).toContain(why)
      }
      expect(Exit.isSuccess((yield* create("https://socio.example.com/hooks")).exit)).toBe(true)
    })
  )

  it.scoped(
    "production: webhooks list says why a delivery refused after DNS is pending, and when it is retried",
    () =>
      Effect.gen(function* () {
        const env = { ...envFor(yield* tempDb), COBRO_MODE: "production", COBRO_SECRET_KEY: "ab".repeat(32) }
        const { partner_id } = yield* cliJson(
          [
            "partners",
            "create",
            "--name",
            "Hooks",
            "--redirect-url",
            "https://hooks.example.test/back",
            "--webhook-url",
            "https://hooks.example.test/cobro"
          ],
          env
        )
        const { user_id } = yield* cliJson(
          [
            "users",
            "create",
            "--name",
            "G",
            "--email",
            "g@example.com",
            "--cuit",
            cuit,
            "--partner-id",
            String(partner_id)
          ],
          env
        )
        yield* cliJson(["accounts", "set-status", String(user_id), "ACTIVE"], env)
        // A worker whose resolver answers with a private address for the partner's name.
        const report = yield* withEngine(
          env,
          Effect.flatMap(Webhooks.Webhooks, (w) => w.deliverDue()).pipe(
            Effect.provide(
              Webhooks.layer().pipe(
                Layer.provide(
                  NodeTransport.layer({
                    mode: "production",
                    resolve: async () => [{ address: "10.0.0.7", family: 4 }]
                  })
                )
              )
            )
          )
        )
        expect(report).toMatchObject({ attempted: 1, retrying: 1, dead: 0 })
        const human = yield* cli(["webhooks", "list"], env)
        expect(human.stdout).toMatch(
          /^EVENT_ID +STATUS {3}ATTEMPTS {2}TYPE +WEBHOOK_URL +DETAIL\nevt_\S+ {2}pending {2}1 {9}account\.activated {2}https:\/\/hooks\.example\.test\/cobro {2}last_error="refused: hooks\.example\.test resolves to 10\.0\.0\.7, a private address" {2}next_attempt_at=\d{4}-\d\d-\d\dT[\d:.]+Z$/
        )
      })
  )

  /**
   * Books past 2^53 centavos (the issue's faucet of 123456789012345.67, written before amounts had
   * a maximum; balances that grew): SQLite answers such INTEGERs as inexact numbers, and verify
   * cried wolf. It must say OK, and still catch a balance that is really one centavo off.
   */
  const verifiesPastSafeIntegers = (env: Record<string, string>) =>
    Effect.gen(function* () {
      const big = 12_345_678_901_234_567n
      const fee = 151_095n
      const total = big + 9_007_199_254_740_993n
      yield* withEngine(
        env,
        Effect.gen(function* () {
          const ledger = yield* Ledger.Ledger
          const ars = (minor: bigint) => Money.make(minor, "ARS")
          const merchant = LedgerAccount.merchantAvailable("m1")
          yield* ledger.post({
            kind: "payment.credited",
            reference: "big-1",
            postings: [
              Ledger.debit(LedgerAccount.bankClearing, ars(big)),
              Ledger.credit(merchant, ars(big - fee)),
              Ledger.credit(LedgerAccount.platformCommission, ars(fee))
            ]
          })
          yield* ledger.post({
            kind: "payment.credited",
            reference: "big-2",
            postings: [
              Ledger.debit(LedgerAccount.bankClearing, ars(9_007_199_254_740_993n)),
              Ledger.credit(merchant, ars(9_007_199_254_740_993n))
            ]
          })
        }) as Effect.Effect<void, unknown, Services.Services>
      )
      expect(yield* cliJson(["ledger", "verify"], env)).toEqual({
        ok: true,
        entries: 2,
        accounts: 3,
        problems: []
      })
      expect((yield* cli(["ledger", "verify"], env)).stdout).toMatch(/^ledger OK: 2 entries, 3 accounts/)

      yield* withEngine(
        env,
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql`UPDATE cobro_ledger_balances SET sum_minor = sum_minor + 1 WHERE account = 'bank:clearing'`
        )
      )
      const broken = yield* cli(["ledger", "verify"], env)
      expect(Exit.isFailure(broken.exit)).toBe(true)
      expect(broken.stdout).toBe(
        `ledger has 1 problem(s):\n  stored balance of bank:clearing ARS is ${total + 1n}, postings sum to ${total}`
      )
    })

  it.scoped("ledger verify reads amounts past 2^53 exactly: SQLite", () =>
    Effect.flatMap(tempDb, (file) => verifiesPastSafeIntegers(envFor(file)))
  )

  it.scoped.skipIf(!pg)("ledger verify reads amounts past 2^53 exactly: Postgres", () =>
    Effect.flatMap(freshPgUrl, (url) => verifiesPastSafeIntegers({ COBRO_DATABASE_URL: url }))
  )

  it.scoped.skipIf(!pg)("reads the same COBRO_DATABASE_URL: Postgres", () =>
    Effect.gen(function* () {
      const env = { COBRO_DATABASE_URL: yield* freshPgUrl }
      const { user_id } = yield* cliJson(
        [
          "users",
          "create",
          "--name",
          "Pg",
          "--email",
          "pg@example.com",
          "--cuit",
          cuit,
          "--user-id",
          "pg_user"
        ],
        env
      )
      expect(user_id).toBe("pg_user")
      expect(yield* cliJson(["accounts", "set-status", "pg_user", "ACTIVE"], env)).toEqual({
        user_id: "pg_user",
        account_status: "ACTIVE"
      })
      expect((yield* cliJson(["ledger", "verify"], env))["ok"]).toBe(true)
      expect((yield* cli(["migrate"], env)).stdout).toMatch(/^Postgres postgres:\/\/.* is up to date$/)
    })
  )

  it.scoped("a bad configuration fails before touching anything, naming the variable", () =>
    Effect.gen(function* () {
      const result = yield* cli(
        ["users", "create", "--name", "G", "--email", "g@example.com", "--cuit", cuit],
        {
          COBRO_DATABASE_URL: "mysql://root@localhost/cobro"
        }
      )
      expect(Exit.isFailure(result.exit)).toBe(true)
      expect(failureOf(result)).toMatch(
        /^invalid configuration:\n {2}COBRO_DATABASE_URL uses the unsupported scheme/
      )
    })
  )

  it.scoped("a database that cannot be opened is reported with its path and the reason", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "not-a-directory")
      fs.writeFileSync(file, "")
      const result = yield* cli(["migrate"], { COBRO_DATABASE_URL: path.join(file, "cobro.db") })
      expect(Exit.isFailure(result.exit)).toBe(true)
      expect(failureOf(result)).toMatch(
        /^cannot create the directory of SQLite .*not-a-directory\/cobro\.db: E(NOTDIR|EXIST)\b/
      )
    })
  )

  it.scoped("a usage error is printed by the CLI itself", () =>
    Effect.gen(function* () {
      const env = envFor(yield* tempDb)
      const result = yield* cli(["users", "create", "--name", "H"], env)
      expect(Exit.isFailure(result.exit)).toBe(true)
      expect(result.stderr).toMatch(/--email/)
      // The executable adds nothing: the CLI's own message is enough.
      expect(failureOf(result)).toBe("(nothing printed)")
    })
  )
})
