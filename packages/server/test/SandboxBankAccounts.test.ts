/**
 * Sandbox bank accounts over real HTTP on the whole server (SQLite and Postgres): a merchant
 * registers two accounts, verifies them as a split's payout accounts, and after the hold the
 * payouts arrive in each account's received transfers; another merchant may pay out to them but
 * never reads or removes them; bad input is a 400 naming the field and writes nothing; a number
 * or alias in use is 409; the cap per merchant holds; a restarted server still knows the
 * accounts (they are stored); the CVUs of payments, customers and splits name the merchant.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpClientRequest } from "@effect/platform"
import { SecondFactor } from "@cobro/core"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { Effect } from "effect"
import { Admin } from "../src/index.js"
import { cli, cliJson, configOf, failureOf, get, postJson, request, serverLayer, tempDb } from "./support.js"

const pgUp = await Effect.runPromise(pgAvailable)

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

/** Valid CBUs (both check digits right) of three banks. */
const CBU_1 = "2850590940090418135201"
const CBU_2 = "0720123900000123456784"
const CBU_3 = "0170099222000044123453"
/** CBU_1 with its last (check) digit changed. */
const BAD_CBU = "2850590940090418135202"

const CUIT_A = "30712345671"

const merchant = (user_id: string, cuit = CUIT_A) =>
  Admin.createUser({
    user_id,
    name: `Tienda ${user_id}`,
    email: `${user_id}@example.com`,
    cuit,
    alias_prefix: user_id.replace("_", ""),
    status: "ACTIVE"
  })

const tokenOf = (created: { user_id: string; client_id: string; client_secret: string }) =>
  Effect.map(
    postJson(`/users/${created.user_id}/tokens`, {
      client_id: created.client_id,
      client_secret: created.client_secret
    }),
    (r) => (r.body["data"] as { token: string }).token
  )

const del = (url: string, token: string) =>
  request(HttpClientRequest.del(url).pipe(HttpClientRequest.bearerToken(token)))

const register = (token: string, body: Json) => postJson("/sandbox/bank-accounts", body, token)

const listOf = (token: string) =>
  Effect.map(get("/sandbox/bank-accounts", token), (r) => {
    expect(r.status).toBe(200)
    return (r.body["data"] as Json).accounts as Array<Json>
  })

/** Payout accounts of the caller at `addresses`, created and verified with the sandbox's 2FA code. */
const activeAccounts = (token: string, addresses: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const created = yield* postJson(
      "/split/accounts",
      addresses.map((address) => ({ address })),
      token
    )
    expect(created.status).toBe(200)
    const request_id = (created.body["data"] as Json).request_id as string
    const verified = yield* postJson(
      "/split/accounts/verify",
      { request_id, code: SecondFactor.sandboxCode(request_id) },
      token
    )
    expect(verified.status).toBe(200)
    return (verified.body["data"] as Json).accounts as Array<Json>
  })

const withServer = <A, E, R>(database: string, body: Effect.Effect<A, E, R>) =>
  Effect.flatMap(configOf({ COBRO_DATABASE_URL: database, COBRO_JOB_INTERVAL: "1 hour" }), (config) =>
    Effect.provide(body, serverLayer(config))
  )

/** Two accounts, a split paid out to both, the transfers read by their owner only. */
const payoutsArrive = (database: string) =>
  withServer(
    database,
    Effect.gen(function* () {
      const a = yield* merchant("tienda_a")
      const b = yield* merchant("tienda_b", "20123456786")
      const tokenA = yield* tokenOf(a)
      const tokenB = yield* tokenOf(b)

      const first = yield* register(tokenA, {
        cbu: CBU_1,
        alias: "cuenta.uno.pruebas",
        holder_name: "Ana Uno",
        cuit: "27-28123456-6"
      })
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({
        message: "sandbox.bank_account.registered",
        error: false,
        code: 200,
        data: { cbu: CBU_1, alias: "cuenta.uno.pruebas", holder_name: "Ana Uno", cuit: "27281234566" }
      })
      // Every field left out: a random valid CBU and alias, the merchant's own name and CUIT.
      const second = yield* register(tokenA, {})
      expect(second.status).toBe(200)
      const two = second.body["data"] as Json
      expect(two).toMatchObject({ holder_name: "Tienda tienda_a", cuit: CUIT_A })
      expect(two.cbu).toMatch(/^\d{22}$/)
      expect(two.alias).toMatch(/^[a-z0-9.-]{6,20}$/)
      expect(typeof two.created_at).toBe("string")
      // The same registration again answers the stored account.
      const again = yield* register(tokenA, {
        cbu: CBU_1,
        alias: "cuenta.uno.pruebas",
        holder_name: "Ana Uno",
        cuit: "27281234566"
      })
      expect(again.status).toBe(200)
      expect(again.body["data"]).toEqual(first.body["data"])
      expect((yield* listOf(tokenA)).map((x) => x.cbu)).toEqual([CBU_1, two.cbu])
      expect(yield* listOf(tokenB)).toEqual([])

      // The bank answers holder look-ups for them: they verify as the split's payout accounts.
      const accounts = yield* activeAccounts(tokenA, ["cuenta.uno.pruebas", two.cbu])
      expect(accounts.map((x) => [x.bank_account, x.holder_name, x.holder_cuit])).toEqual([
        [CBU_1, "Ana Uno", "27281234566"],
        [two.cbu, "Tienda tienda_a", CUIT_A]
      ])

      // A split paid by the faucet, paid out to both after the hold.
      const split = yield* postJson("/split/payments", { external_id: "order-1" }, tokenA)
      expect(split.status).toBe(200)
      const splitData = split.body["data"] as Json
      // The split's CVU names the merchant as its holder (a collecting account).
      const holderOfSplit = yield* activeAccountsHolder(tokenB, splitData.cvu)
      expect(holderOfSplit).toEqual({ holder_name: "Tienda tienda_a", holder_cuit: CUIT_A })
      // So does a fixed customer's CVU.
      const customer = yield* postJson(
        "/customers/",
        { user_id: "tienda_a", alias: "cliente1", customer_id: "c1", name: "Cliente Uno" },
        tokenA
      )
      expect(customer.status).toBe(200)
      const customerCvu = (customer.body["data"] as Json).bank_info.cvu as string
      expect(yield* activeAccountsHolder(tokenB, customerCvu)).toEqual({
        holder_name: "Tienda tienda_a",
        holder_cuit: CUIT_A
      })
      const paid = yield* postJson(`/cvu/${splitData.cvu}/faucet`, { amount: 1000 }, tokenA)
      expect(paid.status).toBe(200)
      const instructed = yield* postJson(
        `/split/payments/${splitData.split_payment_id}/payouts`,
        {
          payouts: [
            { account_id: accounts[0].account_id, amount: 600 },
            { account_id: accounts[1].account_id, amount: 387.9 }
          ]
        },
        tokenA
      )
      expect(instructed.status).toBe(200)
      const advanced = yield* postJson("/sandbox/clock/advance", { seconds: 12 * 3600 }, tokenA)
      expect(advanced.status).toBe(200)
      const read = yield* get(`/split/payments/${splitData.split_payment_id}`, tokenA)
      const payouts = (read.body["data"] as Json).payouts as Array<Json>
      expect(payouts.map((p) => p.status)).toEqual(["SUCCESS", "SUCCESS"])

      const received1 = yield* get(`/sandbox/bank-accounts/${CBU_1}/transfers`, tokenA)
      expect(received1.status).toBe(200)
      expect(received1.body).toMatchObject({ message: "sandbox.bank_account.transfers.found", error: false })
      expect((received1.body["data"] as Json).transfers).toEqual([
        {
          transaction_id: payouts[0].bank_transaction_id,
          amount: 600,
          currency: "ARS",
          status: "completed",
          to: CBU_1,
          reference: expect.any(String),
          received_at: expect.any(String)
        }
      ])
      const received2 = yield* get(`/sandbox/bank-accounts/${two.cbu}/transfers`, tokenA)
      expect((received2.body["data"] as Json).transfers).toMatchObject([
        { transaction_id: payouts[1].bank_transaction_id, amount: 387.9, status: "completed" }
      ])

      // Another merchant may pay out to them (a bank account is anyone's destination)…
      const foreign = yield* activeAccounts(tokenB, [CBU_1])
      expect(foreign[0]).toMatchObject({ bank_account: CBU_1, holder_name: "Ana Uno" })
      // …but never reads, lists or removes them.
      for (const path of [`/sandbox/bank-accounts/${CBU_1}/transfers`, `/sandbox/bank-accounts/${CBU_1}`]) {
        const r = yield* get(path, tokenB)
        expect(r.status).toBe(404)
        expect(r.body).toMatchObject({ message: "sandbox_bank_account.not.found", error: true, code: 404 })
      }
      expect((yield* del(`/sandbox/bank-accounts/${CBU_1}`, tokenB)).status).toBe(404)
      expect((yield* get(`/sandbox/bank-accounts/${CBU_1}`, tokenA)).status).toBe(200)
      // Without a token: 401.
      expect((yield* get("/sandbox/bank-accounts")).status).toBe(401)
      expect((yield* postJson("/sandbox/bank-accounts", {})).status).toBe(401)

      // Removed: the bank no longer knows it.
      const removed = yield* del(`/sandbox/bank-accounts/${two.cbu}`, tokenA)
      expect(removed.status).toBe(200)
      expect(removed.body).toMatchObject({ message: "sandbox.bank_account.removed", data: { cbu: two.cbu } })
      expect((yield* listOf(tokenA)).map((x) => x.cbu)).toEqual([CBU_1])
      const unknown = yield* postJson("/split/accounts", [{ address: two.cbu }], tokenA)
      expect(unknown.status).toBe(400)
      expect(unknown.body).toMatchObject({ message: "payout_account.holder.not.found" })
    })
  )

/** The holder name and CUIT the bank reports for `address`, read through a payout account of the caller. */
const activeAccountsHolder = (token: string, address: string) =>
  Effect.map(postJson("/split/accounts", [{ address }], token), (r) => {
    expect(r.status).toBe(200)
    const account = (r.body["data"] as Json).accounts[0]
    return { holder_name: account.holder_name, holder_cuit: account.holder_cuit }
  })

/** Bad input is a 400 naming the field, conflicts a 409, the cap holds; nothing is written. */
const refusals = (database: string) =>
  withServer(
    database,
    Effect.gen(function* () {
      const a = yield* merchant("tienda_a")
      const b = yield* merchant("tienda_b", "20123456786")
      const tokenA = yield* tokenOf(a)
      const tokenB = yield* tokenOf(b)
      yield* Admin.ensureDemo()
      const cases: ReadonlyArray<readonly [Json, string]> = [
        [{ cbu: BAD_CBU }, "cbu"],
        [{ cbu: "12345" }, "cbu"],
        [{ cbu: 2850590940 }, "cbu"],
        [{ alias: "ab" }, "alias"],
        [{ alias: "Con Mayusculas" }, "alias"],
        [{ cuit: "30712345672" }, "cuit"],
        [{ cuit: "99-12345678-1" }, "cuit"],
        [{ holder_name: "   " }, "holder_name"],
        [{ holder_name: "x".repeat(201) }, "holder_name"]
      ]
      for (const [body, field] of cases) {
        const r = yield* register(tokenA, body)
        expect(r.status, JSON.stringify(body)).toBe(400)
        expect(r.body).toMatchObject({ error: true, code: 400, message: "request.invalid", data: { field } })
      }
      expect(yield* listOf(tokenA)).toEqual([])

      expect((yield* register(tokenA, { cbu: CBU_1, alias: "cuenta.de.ana" })).status).toBe(200)
      // The number or the alias in use, by another merchant or with other details: 409.
      const taken = yield* register(tokenB, { cbu: CBU_1 })
      expect(taken.status).toBe(409)
      expect(taken.body).toMatchObject({ message: "sandbox_bank_account.exists", error: true, code: 409 })
      const otherDetails = yield* register(tokenA, {
        cbu: CBU_1,
        alias: "cuenta.de.ana",
        holder_name: "Otra"
      })
      expect(otherDetails.status).toBe(409)
      const alias = yield* register(tokenB, { cbu: CBU_2, alias: "cuenta.de.ana" })
      expect(alias.status).toBe(409)
      expect(alias.body).toMatchObject({ message: "sandbox_bank_account.alias.taken" })
      // The sandbox bank's own accounts (the demo's payout account, a payment's CVU) are not for taking.
      const demo = yield* register(tokenB, { cbu: Admin.demo.payoutAccount.account })
      expect(demo.status).toBe(409)
      const demoAlias = yield* register(tokenB, { cbu: CBU_3, alias: Admin.demo.payoutAccount.alias })
      expect(demoAlias.status).toBe(409)
      const payment = yield* postJson(
        "/payments/",
        {
          user_id: "tienda_b",
          external_id: "order-1",
          price: { amount: 1500, currency: "ARS" },
          payment_options: ["transfer"]
        },
        tokenB
      )
      expect(payment.status).toBe(200)
      const paymentCvu = (payment.body["data"] as Json).quotes[0].cvu as string
      expect((yield* register(tokenB, { cbu: paymentCvu })).status).toBe(409)
      expect(yield* listOf(tokenB)).toEqual([])

      // The cap: 20 accounts per merchant.
      for (let i = 1; i < 20; i++) {
        const r = yield* register(tokenA, {})
        expect(r.status).toBe(200)
      }
      const over = yield* register(tokenA, {})
      expect(over.status).toBe(409)
      expect(over.body).toMatchObject({ message: "sandbox_bank_account.limit.reached" })
      expect(yield* listOf(tokenA)).toHaveLength(20)
      // Removing one makes room.
      expect((yield* del(`/sandbox/bank-accounts/${CBU_1}`, tokenA)).status).toBe(200)
      expect((yield* register(tokenA, { cbu: CBU_1 })).status).toBe(200)
      // Another merchant's cap is its own.
      expect((yield* register(tokenB, { cbu: CBU_2 })).status).toBe(200)
    })
  )

/** The accounts are stored: a server started again on the database still knows them. */
const restart = (database: string) =>
  Effect.gen(function* () {
    const created = yield* withServer(
      database,
      Effect.gen(function* () {
        const a = yield* merchant("tienda_a")
        const token = yield* tokenOf(a)
        expect(
          (yield* register(token, { cbu: CBU_1, alias: "cuenta.guardada", holder_name: "Ana" })).status
        ).toBe(200)
        return a
      })
    )
    yield* withServer(
      database,
      Effect.gen(function* () {
        const token = yield* tokenOf(created)
        expect(yield* activeAccountsHolder(token, "cuenta.guardada")).toEqual({
          holder_name: "Ana",
          holder_cuit: CUIT_A
        })
        expect((yield* listOf(token)).map((x) => x.cbu)).toEqual([CBU_1])
      })
    )
  })

/** `cobro sandbox bank-account` stores an account the running server then knows. */
const fromCli = (database: string) =>
  Effect.gen(function* () {
    const env = { COBRO_DATABASE_URL: database }
    const created = yield* withServer(database, merchant("tienda_a"))
    const registered = yield* cliJson(
      ["sandbox", "bank-account", "--user-id", "tienda_a", "--cbu", CBU_2, "--alias", "cuenta.de.cli"],
      env
    )
    expect(registered).toMatchObject({
      cbu: CBU_2,
      alias: "cuenta.de.cli",
      holder_name: "Tienda tienda_a",
      cuit: CUIT_A,
      user_id: "tienda_a"
    })
    const bad = yield* cli(["sandbox", "bank-account", "--user-id", "tienda_a", "--cbu", BAD_CBU], env)
    expect(failureOf(bad)).toContain("cbu")
    const taken = yield* cli(
      ["sandbox", "bank-account", "--user-id", "tienda_a", "--alias", "cuenta.de.cli"],
      env
    )
    expect(failureOf(taken)).toContain("sandbox_bank_account.alias.taken")
    const listed = yield* cli(["sandbox", "bank-accounts", "--user-id", "tienda_a"], env)
    expect(listed.stdout).toContain(CBU_2)
    yield* withServer(
      database,
      Effect.gen(function* () {
        const token = yield* tokenOf(created)
        expect(yield* activeAccountsHolder(token, "cuenta.de.cli")).toEqual({
          holder_name: "Tienda tienda_a",
          holder_cuit: CUIT_A
        })
        expect((yield* listOf(token)).map((x) => x.alias)).toEqual(["cuenta.de.cli"])
      })
    )
  })

describe("sandbox bank accounts (SQLite)", () => {
  it.scopedLive("cobro sandbox bank-account registers one the server knows", () =>
    Effect.flatMap(tempDb, fromCli)
  )
  it.scopedLive("a merchant's two accounts receive a split's payouts; only it reads them", () =>
    Effect.flatMap(tempDb, payoutsArrive)
  )
  it.scopedLive("bad input is a 400 naming the field; conflicts and the cap are 409", () =>
    Effect.flatMap(tempDb, refusals)
  )
  it.scopedLive("a restarted server still knows the registered accounts", () =>
    Effect.flatMap(tempDb, restart)
  )
})

describe.skipIf(!pgUp)("sandbox bank accounts (Postgres)", () => {
  it.scopedLive("a merchant's two accounts receive a split's payouts; only it reads them", () =>
    Effect.flatMap(freshPgUrl, payoutsArrive)
  )
  it.scopedLive("bad input is a 400 naming the field; conflicts and the cap are 409", () =>
    Effect.flatMap(freshPgUrl, refusals)
  )
  it.scopedLive("a restarted server still knows the registered accounts", () =>
    Effect.flatMap(freshPgUrl, restart)
  )
})
