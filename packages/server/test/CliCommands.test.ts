/**
 * The operator's read commands (`users list/show`, `partners list`, `payments show`), the
 * onboarding URL `partners create` prints, header rows, precise CUIT errors, and a merchant made
 * with `users create --password-stdin` signing in on the hosted onboarding page over HTTP.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount, PaymentRequest, Payments } from "@cobro/core"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { FetchHttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Exit, Schema } from "effect"
import { Services } from "../src/index.js"
import { cli, cliJson, configOf, failureOf, request, serverLayer, tempDb } from "./support.js"

const cuit = BankAccount.makeCuit("30", "71234567")

const pg = await Effect.runPromise(pgAvailable)
if (!pg) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(`\n!!! Postgres at ${pgAdminUrl} is not reachable: the CLI's Postgres tests are SKIPPED !!!\n`)
}

const withEngine = <A, E>(env: Record<string, string>, effect: Effect.Effect<A, E, Services.Services>) =>
  Effect.flatMap(configOf(env), (config) => Effect.provide(effect, Services.layer(config)))

const sqlite = Effect.map(tempDb, (file) => ({ COBRO_DATABASE_URL: `file:${file}` }))
const postgres = Effect.map(freshPgUrl, (url) => ({ COBRO_DATABASE_URL: url }))

const createUser = (env: Record<string, string>, userId: string, extra: ReadonlyArray<string> = []) =>
  cliJson(
    [
      "users",
      "create",
      "--name",
      `Tienda ${userId}`,
      "--email",
      `${userId}@example.com`,
      "--cuit",
      cuit,
      "--user-id",
      userId,
      ...extra
    ],
    env
  )

/** The same checks on SQLite and Postgres: every input reaches both stores. */
const readCommands = (env: Record<string, string>) =>
  Effect.gen(function* () {
    yield* withEngine(env, Effect.void) // the database, migrated: read commands refuse a missing one
    expect((yield* cli(["users", "list"], env)).stdout).toBe("no users")
    expect(yield* cliJson(["users", "list"], env)).toEqual([])
    expect((yield* cli(["partners", "list"], env)).stdout).toBe("no partners")

    const { partner_id } = yield* cliJson(
      ["partners", "create", "--name", "Socio", "--redirect-url", "https://socio.example.com/back"],
      env
    )
    yield* createUser(env, "b_shop", ["--partner-id", String(partner_id), "--status", "ACTIVE"])
    yield* createUser(env, "a_shop", ["--alias-prefix", "ashop"])

    const human = (yield* cli(["users", "list"], env)).stdout.split("\n")
    expect(human[0]).toBe(
      `USER_ID  STATUS   NAME           EMAIL               CUIT         PARTNER_ID${" ".repeat(Math.max(0, String(partner_id).length - 10) + 2)}PASSWORD`
    )
    const pad = " ".repeat(Math.max(10, String(partner_id).length) + 2 - 1)
    expect(human[1]).toBe(`a_shop   PENDING  Tienda a_shop  a_shop@example.com  30712345671  -${pad}no`)
    expect(human[2]).toBe(
      `b_shop   ACTIVE   Tienda b_shop  b_shop@example.com  30712345671  ${partner_id}${" ".repeat(Math.max(0, 10 - String(partner_id).length) + 2)}no`
    )
    expect(human).toHaveLength(3)

    const listed = (yield* cliJson(["users", "list"], env)) as unknown as ReadonlyArray<
      Record<string, unknown>
    >
    expect(listed.map((u) => u["user_id"])).toEqual(["a_shop", "b_shop"])
    expect(listed[0]).toMatchObject({
      user_id: "a_shop",
      email: "a_shop@example.com",
      cuit: "30712345671",
      account_status: "PENDING",
      alias_prefix: "ashop",
      partner_id: null,
      client_id: expect.stringMatching(/^cli_/),
      password_set: false
    })
    // Pages: after the last id of the previous one.
    const page = (yield* cliJson(
      ["users", "list", "--limit", "1", "--after", "a_shop"],
      env
    )) as unknown as ReadonlyArray<Record<string, unknown>>
    expect(page.map((u) => u["user_id"])).toEqual(["b_shop"])
    expect(failureOf(yield* cli(["users", "list", "--limit", "0"], env))).toBe(
      "request.invalid (limit): must be an integer from 1 to 500, got 0"
    )

    const shown = yield* cliJson(["users", "show", "b_shop"], env)
    expect(shown).toMatchObject({ user_id: "b_shop", account_status: "ACTIVE", partner_id })
    const showHuman = (yield* cli(["users", "show", "a_shop"], env)).stdout
    expect(showHuman).toMatch(/^user_id: {6}a_shop\nname: {9}Tienda a_shop\n/m)
    expect(showHuman).toContain("\nstatus:       PENDING\n")
    expect(showHuman).toContain("\npassword:     not set\n")
    const missing = yield* cli(["users", "show", "nobody"], env)
    expect(Exit.isFailure(missing.exit)).toBe(true)
    expect(failureOf(missing)).toBe("user.not.found: user nobody not found")
    expect(failureOf(yield* cli(["users", "show", "bad\u0001id"], env))).toMatch(
      /^request\.invalid \(user_id\): /
    )

    const partners = (yield* cliJson(["partners", "list"], env)) as unknown as ReadonlyArray<
      Record<string, unknown>
    >
    expect(partners).toHaveLength(1)
    expect(partners[0]).toMatchObject({
      partner_id,
      name: "Socio",
      redirect_url: "https://socio.example.com/back",
      webhook_url: null,
      onboarding_url: `http://localhost:3000/authorize?partner_id=${partner_id}`
    })
    expect(partners[0]).not.toHaveProperty("client_secret_sealed")
    const partnersHuman = (yield* cli(["partners", "list"], env)).stdout.split("\n")
    expect(partnersHuman[0]).toMatch(
      /^PARTNER_ID +SLUG +NAME +COMMISSION +REDIRECT_URL +WEBHOOK_URL +ONBOARDING_URL$/
    )
    expect(partnersHuman[1]).toMatch(
      new RegExp(`^${partner_id} +socio +Socio +0 +https://socio\\.example\\.com/back +- +http`)
    )

    // A payment of any merchant, by id.
    const payment = yield* withEngine(
      env,
      Effect.flatMap(Payments.Payments, (payments) =>
        payments.create(
          Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
            user_id: "b_shop",
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"],
            external_id: "order-7"
          })
        )
      ) as Effect.Effect<
        { readonly id: string; readonly quotes: ReadonlyArray<{ readonly address: string }> },
        unknown,
        Services.Services
      >
    )
    const paymentJson = yield* cliJson(["payments", "show", payment.id], env)
    expect(paymentJson).toMatchObject({
      id: payment.id,
      user_id: "b_shop",
      payment_status: "PENDING",
      external_id: "order-7",
      price: { amount: 1500, currency: "ARS" }
    })
    expect(paymentJson).not.toHaveProperty("creation_request")
    const paymentHuman = (yield* cli(["payments", "show", payment.id], env)).stdout
    expect(paymentHuman).toContain(`id:          ${payment.id}\n`)
    expect(paymentHuman).toContain(`\ncvu:         ${payment.quotes[0]!.address}\n`)
    expect(paymentHuman).toContain("\nprice:       1500.00 ARS\n")
    expect(paymentHuman).toContain("\nreceived:    0.00 ARS in 0 transfer(s)\n")
    const noPayment = yield* cli(["payments", "show", "VAR-b_shop-nope"], env)
    expect(failureOf(noPayment)).toBe("payment.not.found: payment VAR-b_shop-nope not found")
  })

describe("cobro CLI: operator's read commands", () => {
  it.scoped("users list/show, partners list, payments show: SQLite", () =>
    Effect.flatMap(sqlite, readCommands)
  )
  it.scoped.skipIf(!pg)("users list/show, partners list, payments show: Postgres", () =>
    Effect.flatMap(postgres, readCommands)
  )

  it.scoped("partners create prints the onboarding URL at COBRO_PUBLIC_URL, or says it is local", () =>
    Effect.gen(function* () {
      const env = yield* sqlite
      const args = [
        "partners",
        "create",
        "--name",
        "Socio Uno",
        "--redirect-url",
        "https://uno.example.com/back"
      ]
      const local = yield* cli(args, env)
      const id = /^created partner (\S+) /.exec(local.stdout)?.[1]
      expect(local.stdout).toContain(`\n  onboarding URL: http://localhost:3000/authorize?partner_id=${id}\n`)
      expect(local.stderr).toContain(
        "note: COBRO_PUBLIC_URL is not set, so the onboarding URL is this machine's"
      )

      const pub = { ...env, COBRO_PUBLIC_URL: "https://pagos.example.com/" }
      const created = yield* cliJson(
        ["partners", "create", "--name", "Socio Dos", "--redirect-url", "https://dos.example.com/back"],
        pub
      )
      expect(Object.keys(created).sort()).toEqual([
        "client_id",
        "client_secret",
        "onboarding_url",
        "partner_id"
      ])
      expect(created["onboarding_url"]).toBe(
        `https://pagos.example.com/authorize?partner_id=${String(created["partner_id"])}`
      )
      const quiet = yield* cli(["partners", "list"], pub)
      expect(quiet.stderr).not.toContain("COBRO_PUBLIC_URL is not set")
    })
  )

  it.scoped("a CUIT error says what is wrong, on either store", () =>
    Effect.gen(function* () {
      for (const env of [yield* sqlite, ...(pg ? [yield* postgres] : [])]) {
        const create = (value: string) =>
          cli(["users", "create", "--name", "X", "--email", "x@example.com", "--cuit", value], env)
        expect(failureOf(yield* create("30-7123456-1"))).toBe(
          "request.invalid (cuit): must be 11 digits, got 10"
        )
        expect(failureOf(yield* create("30-71234567-2"))).toBe(
          "request.invalid (cuit): has a wrong check digit (the last digit): a digit is probably mistyped"
        )
        expect(failureOf(yield* create("30/71234567/1"))).toBe(
          'request.invalid (cuit): must be 11 digits (dashes are accepted, e.g. 30-71234567-1); "/" is not a digit'
        )
        expect(Exit.isSuccess((yield* create("30-71234567-1")).exit)).toBe(true)
      }
    })
  )
})

/** The form fields the onboarding page's "Ya tengo una cuenta" sends, with its CSRF token. */
const signIn = (partnerId: string, email: string, password: string) =>
  Effect.gen(function* () {
    const page = yield* request(HttpClientRequest.get(`/authorize?partner_id=${partnerId}&state=s1`))
    expect(page.status).toBe(200)
    expect(String(page.body)).toContain("Ya tengo una cuenta")
    const token = /cobro_csrf=([^;]+)/.exec(String(page.headers["set-cookie"] ?? ""))?.[1]
    expect(token).toBeDefined()
    return yield* request(
      HttpClientRequest.post(`/authorize?partner_id=${partnerId}`).pipe(
        HttpClientRequest.bodyUrlParams({
          csrf_token: token!,
          form: "signin",
          partner_id: partnerId,
          state: "s1",
          email,
          password,
          consent: "yes"
        }),
        HttpClientRequest.setHeader("cookie", `cobro_csrf=${token}`)
      )
    ).pipe(Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }))
  })

const passwordSignIn = (env: Record<string, string>) =>
  Effect.gen(function* () {
    const { partner_id } = yield* cliJson(
      ["partners", "create", "--name", "Socio", "--redirect-url", "https://socio.example.com/back"],
      env
    )
    const partnerId = String(partner_id)
    // Too short: refused naming the field, and no user is left behind.
    const short = yield* cli(
      [
        "users",
        "create",
        "--name",
        "P",
        "--email",
        "p@example.com",
        "--cuit",
        cuit,
        "--user-id",
        "pw",
        "--password-stdin"
      ],
      env,
      "corta\n"
    )
    expect(failureOf(short)).toBe("request.invalid (password): must be at least 8 characters")
    expect(failureOf(yield* cli(["users", "show", "pw"], env))).toBe("user.not.found: user pw not found")

    const created = yield* cliJson(
      [
        "users",
        "create",
        "--name",
        "P",
        "--email",
        "p@example.com",
        "--cuit",
        cuit,
        "--user-id",
        "pw",
        "--password-stdin"
      ],
      env,
      "una clave larga\n"
    )
    expect(created["user_id"]).toBe("pw")
    expect(yield* cliJson(["users", "show", "pw"], env)).toMatchObject({ password_set: true })
    // Without a password a CLI-made merchant cannot sign in (there is nothing to match).
    yield* createUser(env, "nopw")

    const config = yield* configOf(env)
    yield* Effect.gen(function* () {
      const wrong = yield* signIn(partnerId, "p@example.com", "otra clave larga")
      expect(wrong.status).toBe(401)
      const none = yield* signIn(partnerId, "nopw@example.com", "una clave larga")
      expect(none.status).toBe(401)
      const right = yield* signIn(partnerId, "p@example.com", "una clave larga")
      expect(right.status).toBe(303)
      const location = new URL(String(right.headers["location"]))
      expect(location.origin + location.pathname).toBe("https://socio.example.com/back")
      expect(location.searchParams.get("state")).toBe("s1")
      expect(location.searchParams.get("code")).toBeTruthy()
    }).pipe(Effect.provide(serverLayer(config)))

    // set-password replaces it; the old one no longer signs in.
    const changed = yield* cliJson(
      ["users", "set-password", "pw", "--password-stdin"],
      env,
      "la clave nueva\n"
    )
    expect(changed).toEqual({ user_id: "pw", password_set: true })
    yield* Effect.gen(function* () {
      expect((yield* signIn(partnerId, "p@example.com", "una clave larga")).status).toBe(401)
      expect((yield* signIn(partnerId, "p@example.com", "la clave nueva")).status).toBe(303)
    }).pipe(Effect.provide(serverLayer(config)))
    const noFlag = yield* cli(["users", "set-password", "pw"], env)
    expect(failureOf(noFlag)).toMatch(/^give the password on stdin with --password-stdin/)
    expect(
      failureOf(yield* cli(["users", "set-password", "ghost", "--password-stdin"], env, "12345678\n"))
    ).toBe("user.not.found: user ghost not found")
  })

describe("cobro CLI: a merchant's password for the onboarding page", () => {
  it.scoped("users create --password-stdin, then sign-in on /authorize over HTTP: SQLite", () =>
    Effect.flatMap(sqlite, passwordSignIn)
  )
  it.scoped.skipIf(!pg)("users create --password-stdin, then sign-in on /authorize over HTTP: Postgres", () =>
    Effect.flatMap(postgres, passwordSignIn)
  )
})
