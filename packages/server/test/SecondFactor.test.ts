/**
 * The second factor in production, over real HTTP on BIND (the simulator), on SQLite and on
 * Postgres: a payout account is refused until the merchant enrols a factor (409); a code computed
 * from the request id (the sandbox's FNV-1a) never verifies; the merchant's TOTP code does, once
 * (a replayed code is refused) and wrong codes lock the factor; e-mail codes arrive at a real SMTP
 * server started here, verify once, and wrong ones are limited. The test computes TOTP codes from
 * the enrolment's secret with `otpauth`, as an authenticator app would.
 */
import { describe, expect, it } from "@effect/vitest"
import { BindSimulator } from "@cobro/bank-bind/testing"
import { BankAccount, SecondFactor } from "@cobro/core"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { Effect, type Scope } from "effect"
import type { AddressInfo } from "node:net"
import * as OTPAuth from "otpauth"
import { SMTPServer } from "smtp-server"
import { Admin } from "../src/index.js"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  bindEnv,
  cli,
  cliJson,
  configOf,
  type Env,
  failureOf,
  get,
  postJson,
  provider,
  serverLayer,
  tempDb,
  tempDir
} from "./support.js"

const pgUp = await Effect.runPromise(pgAvailable)
if (!pgUp) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(
    `\n!!! Postgres at ${pgAdminUrl} is not reachable: the second factor's Postgres tests are SKIPPED !!!\n`
  )
}

const cuit = "30712345671"
/** Bank accounts payout accounts are created for (an active one cannot be created again). */
const payees = [1, 2, 3, 4].map((n) => BankAccount.makeCbu("0170099", `000000000090${n}`))

interface Mail {
  readonly to: string
  readonly raw: string
}

/** A real SMTP server on loopback that keeps every message; closed with the scope. */
const smtpServer = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly mails: Array<Mail>; readonly server: SMTPServer }>(
    (resume) => {
      const mails: Array<Mail> = []
      const server = new SMTPServer({
        authOptional: true,
        disabledCommands: ["STARTTLS"],
        logger: false,
        onData(stream, session, callback) {
          let raw = ""
          stream.on("data", (chunk: Buffer) => (raw += chunk.toString()))
          stream.on("end", () => {
            for (const to of session.envelope.rcptTo) mails.push({ to: to.address, raw })
            callback()
          })
        }
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.server.address() as AddressInfo).port
        resume(Effect.succeed({ url: `smtp://127.0.0.1:${port}`, mails, server }))
      })
    }
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((done) => server.close(() => done())))
)

/** The code of the mail the server received for `to` after `seen` mails. */
const codeOf = (mails: ReadonlyArray<Mail>, seen: number, to: string) => {
  const mail = mails.slice(seen).find((m) => m.to === to)
  expect(mail, `a mail to ${to}`).toBeDefined()
  const code = /verification code is (\d{6})/.exec(mail!.raw)?.[1]
  expect(code).toMatch(/^\d{6}$/)
  return code!
}

const productionEnv = (sim: BindSimulator.Simulator, database: string, extra: Env = {}): Env => ({
  COBRO_MODE: "production",
  COBRO_SECRET_KEY: "5c".repeat(32),
  COBRO_DATABASE_URL: database,
  COBRO_JOB_INTERVAL: "1 hour",
  COBRO_RECONCILE_INTERVAL: "1 hour",
  ...bindEnv(sim),
  COBRO_BIND_RETRY_BASE: "10 millis",
  COBRO_BIND_WEBHOOK_SECRET: "hook-secret-0123456789",
  ...extra
})

const merchant = (user_id: string) =>
  Effect.gen(function* () {
    const user = yield* Admin.createUser({
      user_id,
      name: `Tienda ${user_id}`,
      email: `${user_id}@example.com`,
      cuit,
      status: "ACTIVE"
    })
    const issued = yield* postJson(`/users/${user_id}/tokens`, {
      client_id: user.client_id,
      client_secret: user.client_secret
    })
    return (issued.body["data"] as { token: string }).token
  })

const dataOf = <A = Record<string, unknown>>(r: { readonly body: Record<string, unknown> }) =>
  r.body["data"] as A

/** The envelope's error key and status of an answer. */
const refusal = (r: { readonly status: number; readonly body: Record<string, unknown> }) => ({
  status: r.status,
  message: r.body["message"]
})

let created = 0
/** Payout accounts for the next bank account of `payees`. */
const createAccounts = (token: string) =>
  postJson("/split/accounts", [{ address: payees[created++ % payees.length]! }], token)

/** A TOTP code `steps` time steps from now. */
const totpCode = (totp: OTPAuth.TOTP, steps = 0) => totp.generate({ timestamp: Date.now() + steps * 30_000 })

/** Runs `body` against a production server on `database`, `extra` adding settings. */
const onServer = <A, E, R>(
  database: Effect.Effect<string, never, Scope.Scope>,
  extra: Env,
  body: Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    const sim = yield* BindSimulator.scoped()
    for (const cbu of payees)
      sim.addHolder({ cuit: BankAccount.makeCuit("20", "40000902"), name: "Ana", cbu })
    const env = productionEnv(sim, yield* database, extra)
    const config = yield* configOf(env)
    return yield* body.pipe(Effect.provide(serverLayer(config)), Effect.withConfigProvider(provider(env)))
  })

const stores: ReadonlyArray<readonly [string, Effect.Effect<string, never, Scope.Scope>, boolean]> = [
  ["SQLite", tempDb, false],
  ["Postgres", freshPgUrl, !pgUp]
]

describe.each(stores)("the second factor in production on %s", (_, database, skip) => {
  it.scopedLive.skipIf(skip)(
    "no factor: 409; TOTP enrolled with the app's code; the request's FNV-1a code refused, the TOTP code verifies once; wrong codes lock the factor",
    () =>
      onServer(
        database,
        {},
        Effect.gen(function* () {
          const token = yield* merchant("shop")
          const factorUrl = "/users/shop/second-factor"

          // No factor: no payout account, and nothing written.
          expect(refusal(yield* createAccounts(token))).toEqual({
            status: 409,
            message: "second_factor.not_enrolled"
          })
          expect(dataOf<{ accounts: Array<unknown> }>(yield* get("/split/accounts", token)).accounts).toEqual(
            []
          )
          expect(dataOf(yield* get(factorUrl, token))).toEqual({})

          // Enrolment: the secret, its otpauth:// URI and the QR code as SVG.
          const started = yield* postJson(`${factorUrl}/totp`, {}, token)
          expect(started.status).toBe(200)
          const enrolment = dataOf<{ secret: string; otpauth_uri: string; qr_svg: string; kind: string }>(
            started
          )
          expect(enrolment.kind).toBe("totp")
          expect(enrolment.otpauth_uri).toMatch(/^otpauth:\/\/totp\/cobro:shop%40example\.com\?/)
          expect(enrolment.qr_svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/)
          const totp = OTPAuth.URI.parse(enrolment.otpauth_uri) as OTPAuth.TOTP
          expect(totp.secret.base32).toBe(enrolment.secret)
          expect(dataOf(yield* get(factorUrl, token))).toMatchObject({ pending: { kind: "totp" } })
          // Not yet enrolled: payout accounts are still refused.
          expect(refusal(yield* createAccounts(token)).status).toBe(409)

          // A wrong code does not confirm; the app's current code does.
          const current = totpCode(totp)
          const wrong = current === "000000" ? "000001" : "000000"
          expect(refusal(yield* postJson(`${factorUrl}/confirm`, { code: wrong }, token))).toEqual({
            status: 400,
            message: "second_factor.code.invalid"
          })
          const confirmed = yield* postJson(`${factorUrl}/confirm`, { code: current }, token)
          expect(confirmed.status).toBe(200)
          expect(dataOf(confirmed)).toEqual({
            enrolled: { kind: "totp", enrolled_timestamp: expect.any(String) }
          })
          // Replacing it needs a current code of it.
          expect(refusal(yield* postJson(`${factorUrl}/totp`, {}, token))).toEqual({
            status: 400,
            message: "second_factor.code.required"
          })

          // A payout account: the code anyone computes from the request id does not verify.
          const created = yield* createAccounts(token)
          expect(created.status).toBe(200)
          const request_id = dataOf<{ request_id: string }>(created).request_id
          const fnv = SecondFactor.sandboxCode(request_id)
          const next = totpCode(totp, 1)
          expect(fnv).not.toBe(next)
          expect(
            refusal(yield* postJson("/split/accounts/verify", { request_id, code: fnv }, token))
          ).toEqual({
            status: 400,
            message: "verification.code.invalid"
          })
          // The app's code (the next time step: the current one confirmed the enrolment) does.
          const verified = yield* postJson("/split/accounts/verify", { request_id, code: next }, token)
          expect(verified.status).toBe(200)
          expect(
            dataOf<{ accounts: Array<{ status: string }> }>(verified).accounts.map((a) => a.status)
          ).toEqual(["ACTIVE"])

          // The same code again, for another request: refused (each time step once).
          const again = dataOf<{ request_id: string }>(yield* createAccounts(token)).request_id
          expect(
            refusal(yield* postJson("/split/accounts/verify", { request_id: again, code: next }, token))
          ).toEqual({
            status: 400,
            message: "verification.code.invalid"
          })
          // Four more wrong codes: five in a row lock the factor, and then even a right code is refused.
          for (let i = 0; i < 4; i++) {
            yield* postJson("/split/accounts/verify", { request_id: again, code: fnv }, token)
          }
          const third = dataOf<{ request_id: string }>(yield* createAccounts(token)).request_id
          expect(
            refusal(
              yield* postJson("/split/accounts/verify", { request_id: third, code: totpCode(totp, 1) }, token)
            )
          ).toEqual({ status: 409, message: "second_factor.locked" })
          // Removing it needs a right code too (and the factor is locked).
          expect(
            refusal(yield* postJson(`${factorUrl}/remove`, { code: totpCode(totp) }, token)).status
          ).toBe(409)
          expect(dataOf(yield* get(factorUrl, token))).toMatchObject({ enrolled: { kind: "totp" } })
        })
      ),
    120_000
  )

  it.scopedLive.skipIf(skip)(
    "e-mail codes: sent over SMTP to the merchant's e-mail, single use, wrong ones limited; the FNV-1a code refused",
    () =>
      Effect.gen(function* () {
        const smtp = yield* smtpServer
        return yield* onServer(
          database,
          { COBRO_SMTP_URL: smtp.url, COBRO_SMTP_FROM: "cobro <no-reply@cobro.test>" },
          Effect.gen(function* () {
            const token = yield* merchant("mailshop")
            const to = "mailshop@example.com"
            const factorUrl = "/users/mailshop/second-factor"

            let seen = smtp.mails.length
            const started = yield* postJson(`${factorUrl}/email`, {}, token)
            expect(started.status).toBe(200)
            expect(dataOf(started)).toEqual({ kind: "email", email: to, exp_timestamp: expect.any(String) })
            const enrolCode = codeOf(smtp.mails, seen, to)
            const wrongOf = (code: string) => (code === "000000" ? "000001" : "000000")
            expect(
              refusal(yield* postJson(`${factorUrl}/confirm`, { code: wrongOf(enrolCode) }, token))
            ).toEqual({
              status: 400,
              message: "second_factor.code.invalid"
            })
            expect((yield* postJson(`${factorUrl}/confirm`, { code: enrolCode }, token)).status).toBe(200)
            // Single use: the enrolment is done, the code spent.
            expect(refusal(yield* postJson(`${factorUrl}/confirm`, { code: enrolCode }, token))).toEqual({
              status: 409,
              message: "second_factor.enrolment.none"
            })
            expect(dataOf(yield* get(factorUrl, token))).toMatchObject({ enrolled: { kind: "email" } })

            // A payout account: its code is e-mailed; the FNV-1a code and the enrolment's code do not verify.
            seen = smtp.mails.length
            const created = yield* createAccounts(token)
            expect(created.status).toBe(200)
            const request_id = dataOf<{ request_id: string }>(created).request_id
            const code = codeOf(smtp.mails, seen, to)
            for (const bad of [SecondFactor.sandboxCode(request_id), enrolCode].filter((c) => c !== code)) {
              expect(
                refusal(yield* postJson("/split/accounts/verify", { request_id, code: bad }, token))
              ).toEqual({
                status: 400,
                message: "verification.code.invalid"
              })
            }
            expect((yield* postJson("/split/accounts/verify", { request_id, code }, token)).status).toBe(200)

            // Wrong codes are limited: the fifth locks the request, and its right code no longer verifies.
            seen = smtp.mails.length
            const second = dataOf<{ request_id: string }>(yield* createAccounts(token)).request_id
            const secondCode = codeOf(smtp.mails, seen, to)
            const answers: Array<unknown> = []
            for (let i = 0; i < 5; i++) {
              answers.push(
                refusal(
                  yield* postJson(
                    "/split/accounts/verify",
                    { request_id: second, code: wrongOf(secondCode) },
                    token
                  )
                ).message
              )
            }
            expect(answers).toEqual([...Array(4).fill("verification.code.invalid"), "verification.locked"])
            expect(
              refusal(
                yield* postJson("/split/accounts/verify", { request_id: second, code: secondCode }, token)
              )
            ).toEqual({ status: 409, message: "verification.locked" })
          })
        )
      }),
    120_000
  )
})

describe("cobro second-factor", () => {
  it.scopedLive(
    "enroll-totp writes the QR code and prints the URI; confirm with the app's code; a wrong code and a replaced factor without its code refused",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const env: Env = { COBRO_DATABASE_URL: path.join(dir, "cobro.db") }
        yield* cliJson(
          [
            "users",
            "create",
            "--user-id",
            "clishop",
            "--name",
            "Tienda",
            "--email",
            "cli@example.com",
            "--cuit",
            cuit
          ],
          env
        )
        const svg = path.join(dir, "qr.svg")
        const started = yield* cliJson(
          ["second-factor", "enroll-totp", "--user-id", "clishop", "--svg", svg],
          env
        )
        expect(fs.readFileSync(svg, "utf8")).toMatch(/^<svg[\s\S]*<\/svg>\s*$/)
        const totp = OTPAuth.URI.parse(String(started["otpauth_uri"])) as OTPAuth.TOTP
        expect(totp.secret.base32).toBe(started["secret"])
        const current = totpCode(totp)
        const wrong = yield* cli(
          [
            "second-factor",
            "confirm",
            "--user-id",
            "clishop",
            "--code",
            current === "000000" ? "000001" : "000000"
          ],
          env
        )
        expect(failureOf(wrong)).toContain("second_factor.code.invalid")
        expect(
          failureOf(yield* cli(["second-factor", "confirm", "--user-id", "clishop", "--code", "12"], env))
        ).toContain("must be the 6 digits of the code")
        const confirmed = yield* cliJson(
          ["second-factor", "confirm", "--user-id", "clishop", "--code", current],
          env
        )
        expect(confirmed).toEqual({ enrolled: { kind: "totp", enrolled_timestamp: expect.any(String) } })
        const shown = yield* cli(["second-factor", "show", "--user-id", "clishop"], env)
        expect(shown.stdout).toMatch(/enrolled: totp/)
        expect(
          failureOf(yield* cli(["second-factor", "enroll-email", "--user-id", "clishop"], env))
        ).toContain("second_factor.code.required")
        // Removed with the app's next code (the current one confirmed the enrolment).
        const removed = yield* cliJson(
          ["second-factor", "remove", "--user-id", "clishop", "--code", totpCode(totp, 1)],
          env
        )
        expect(removed).toEqual({})
      }),
    60_000
  )
})
