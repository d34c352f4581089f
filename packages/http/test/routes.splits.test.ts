/**
 * Split payments over HTTP: POST/GET /split/payments, the payouts instruction, payout accounts
 * with the sandbox 2FA code (create, verify, list, disable) and the 12-hour hold driven by the
 * TestClock and `Jobs.runDue`. Each `layer` block has its own server and engine.
 */
import { expect, layer } from "@effect/vitest"
import { BankAccount, Jobs, Outbox } from "@cobro/core"
import { SandboxBank } from "@cobro/bank-sandbox"
import { DateTime, Duration, Effect, TestClock } from "effect"
import { bankHolder, call, type Json, merchant, secondFactorCode, serverLayer, tokenFor } from "./support.js"

const errorBody = (status: number, message: string, data: Record<string, unknown> = {}) => ({
  message,
  error: true,
  code: status,
  data: { detail: expect.any(String), ...data }
})

const iso = (dt: DateTime.DateTime) => DateTime.formatIso(dt)

const withToken = (user_id: string) =>
  Effect.gen(function* () {
    const m = yield* merchant(user_id)
    return { ...m, token: yield* tokenFor(user_id, m.client_id, m.client_secret) }
  })

const createSplit = (token: string, external_id: string) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/split/payments", {
      token,
      body: { external_id, webhook_url: "https://shop.example.com/hooks/split" }
    })
    expect(r.status).toBe(200)
    return (r.body as Json).data as { split_payment_id: string; cvu: string; [k: string]: Json }
  })

/** Payout accounts created for `addresses` and verified with the sandbox's code; their ids. */
const activeAccounts = (token: string, ...addresses: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const created = yield* call("POST", "/split/accounts", {
      token,
      body: addresses.map((address) => ({ address }))
    })
    expect(created.status).toBe(200)
    const request_id = (created.body as Json).data.request_id as string
    const verified = yield* call("POST", "/split/accounts/verify", {
      token,
      body: { request_id, code: yield* secondFactorCode(request_id) }
    })
    expect(verified.status).toBe(200)
    return ((verified.body as Json).data.accounts as Array<Json>).map((a) => a.account_id as string)
  })

/** A split funded with 1000.00 through the faucet (987.90 after the sandbox fees). */
const fundedSplit = (token: string, external_id: string) =>
  Effect.gen(function* () {
    const split = yield* createSplit(token, external_id)
    const sent = yield* call("POST", `/cvu/${split.cvu}/faucet`, { token, body: { amount: 1000 } })
    expect(sent.status).toBe(200)
    expect((sent.body as Json).data).toMatchObject({ outcome: "credited", target: "split" })
    return split
  })

layer(serverLayer())("POST /split/payments and GET /split/payments/{id}", (it) => {
  it.effect("creates a split with its own CVU and alias; a repeated create answers the same split", () =>
    Effect.gen(function* () {
      const m = yield* withToken("spl_c1")
      const now = iso(yield* DateTime.now)
      const r = yield* call("POST", "/split/payments", {
        token: m.token,
        body: { external_id: "order-1", webhook_url: "https://shop.example.com/hooks/split" }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ message: "split.created", error: false, code: 200 })
      expect(body.data).toEqual({
        split_payment_id: expect.stringMatching(/^split_/),
        external_id: "order-1",
        webhook_url: "https://shop.example.com/hooks/split",
        cvu: expect.any(String),
        alias: expect.any(String),
        payment_status: "PENDING",
        payout_status: null,
        hold_until: null,
        amount_received: "0.00",
        amount_credited: "0.00",
        balance: "0.00",
        payouts: [],
        creation_timestamp: now,
        last_modified_timestamp: now
      })
      expect(BankAccount.isValidCvu(body.data.cvu)).toBe(true)
      expect(BankAccount.isValidAlias(body.data.alias)).toBe(true)
      const again = yield* call("POST", "/split/payments", {
        token: m.token,
        body: { external_id: "order-1", webhook_url: "https://shop.example.com/hooks/split" }
      })
      expect(again.status).toBe(200)
      expect((again.body as Json).data.split_payment_id).toBe(body.data.split_payment_id)
      const other = yield* call("POST", "/split/payments", {
        token: m.token,
        body: { external_id: "order-1", webhook_url: "https://shop.example.com/other" }
      })
      expect(other.status).toBe(409)
      expect(other.body).toEqual(errorBody(409, "split.external_id.conflict"))
    })
  )

  it.effect("a missing external_id is 400; no token is 401", () =>
    Effect.gen(function* () {
      const m = yield* withToken("spl_c2")
      const missing = yield* call("POST", "/split/payments", { token: m.token, body: {} })
      expect(missing.status).toBe(400)
      expect(missing.body).toEqual(errorBody(400, "request.invalid", { field: "external_id" }))
      const anonymous = yield* call("POST", "/split/payments", { body: { external_id: "x" } })
      expect(anonymous.status).toBe(401)
      expect(anonymous.body).toEqual(errorBody(401, "auth.token.missing"))
    })
  )

  it.effect("GET shows what was received and credited after a transfer; another merchant gets 404", () =>
    Effect.gen(function* () {
      const m = yield* withToken("spl_g1")
      const other = yield* withToken("spl_g2")
      const split = yield* fundedSplit(m.token, "order-2")
      const r = yield* call("GET", `/split/payments/${split.split_payment_id}`, { token: m.token })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ message: "split.found", error: false, code: 200 })
      expect(body.data).toMatchObject({
        split_payment_id: split.split_payment_id,
        payment_status: "RECEIVED",
        payout_status: null,
        hold_until: null,
        amount_received: "1000.00",
        amount_credited: "987.90",
        balance: "987.90",
        payouts: []
      })
      const events = (yield* (yield* Outbox.Outbox).list(0, 100_000)).map((e) => e.event)
      expect(events.find((e) => e.type === "split.funds_received")?.payload).toEqual({
        message: "split.funds_received",
        split_payment_id: split.split_payment_id,
        external_id: "order-2",
        amount: "1000.00",
        hold_until: null
      })
      const theirs = yield* call("GET", `/split/payments/${split.split_payment_id}`, { token: other.token })
      expect(theirs.status).toBe(404)
      expect(theirs.body).toEqual(errorBody(404, "split_payment.not.found"))
    })
  )
})

layer(serverLayer())("payout accounts", (it) => {
  it.effect("POST /split/accounts opens one verification request for the whole list", () =>
    Effect.gen(function* () {
      const m = yield* withToken("spl_a1")
      const a = yield* bankHolder("Ana Proveedora")
      const b = yield* bankHolder("Beto Logistica")
      const now = yield* DateTime.now
      const r = yield* call("POST", "/split/accounts", {
        token: m.token,
        body: [{ address: a, label: "Ana" }, { address: b }]
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ message: "payout_accounts.created", error: false, code: 200 })
      expect(body.data).toMatchObject({
        request_id: expect.stringMatching(/^vreq_/),
        exp_timestamp: iso(DateTime.add(now, { minutes: 10 })),
        status: "PENDING",
        attempts_left: 5
      })
      expect(body.data.accounts).toHaveLength(2)
      expect(body.data.accounts[0]).toMatchObject({
        address: a,
        bank_account: a,
        holder_name: "Ana Proveedora",
        label: "Ana",
        status: "PENDING_VERIFICATION",
        request_id: body.data.request_id
      })
      expect(body.data.accounts[0]).not.toHaveProperty("activation_timestamp")
      expect(body.data.accounts[0]).not.toHaveProperty("disabled_timestamp")
      expect(body.data.accounts[1]).toMatchObject({ address: b, status: "PENDING_VERIFICATION" })
      expect(body.data.accounts[1]).not.toHaveProperty("label")
    })
  )

  it.effect("a wrong code is 400 with the attempts left; the sandbox code activates every account once", () =>
    Effect.gen(function* () {
      const m = yield* withToken("spl_a2")
      const a = yield* bankHolder("Carla")
      const created = yield* call("POST", "/split/accounts", { token: m.token, body: [{ address: a }] })
      const request_id = (created.body as Json).data.request_id as string
      const code = yield* secondFactorCode(request_id)
      const wrongCode = code === "000000" ? "111111" : "000000"
      const wrong = yield* call("POST", "/split/accounts/verify", {
        token: m.token,
        body: { request_id, code: wrongCode }
      })
      expect(wrong.status).toBe(400)
      expect(wrong.body).toEqual(errorBody(400, "verification.code.invalid", { field: "code" }))
      expect((wrong.body as Json).data.detail).toContain("4 attempts left")
      const right = yield* call("POST", "/split/accounts/verify", {
        token: m.token,
        body: { request_id, code }
      })
      expect(right.status).toBe(200)
      const body: Json = right.body
      expect(body).toMatchObject({
        message: "payout_accounts.verified",
        error: false,
        code: 200,
        data: { request_id, status: "VERIFIED", attempts_left: 4 }
      })
      expect(body.data.accounts[0]).toMatchObject({
        address: a,
        status: "ACTIVE",
        activation_timestamp: expect.any(String)
      })
      const again = yield* call("POST", "/split/accounts/verify", {
        token: m.token,
        body: { request_id, code }
      })
      expect(again.status).toBe(409)
      expect(again.body).toEqual(errorBody(409, "verification.used"))
    })
  )

  it.effect("an unknown holder is 400 on the address; an empty list is 400; another's request is 404", () =>
    Effect.gen(function* () {
      const m = yield* withToken("spl_a3")
      const other = yield* withToken("spl_a4")
      const unknownCbu = BankAccount.makeCbu("0170099", "9999999999999")
      const unknown = yield* call("POST", "/split/accounts", {
        token: m.token,
        body: [{ address: unknownCbu }]
      })
      expect(unknown.status).toBe(400)
      expect(unknown.body).toEqual(
        errorBody(400, "payout_account.holder.not.found", { field: "accounts[0].address" })
      )
      const empty = yield* call("POST", "/split/accounts", { token: m.token, body: [] })
      expect(empty.status).toBe(400)
      expect((empty.body as Json).message).toBe("request.invalid")
      const notAList = yield* call("POST", "/split/accounts", {
        token: m.token,
        body: { address: yield* bankHolder("Dario") }
      })
      expect(notAList.status).toBe(400)
      expect((notAList.body as Json).message).toBe("request.invalid")
      const created = yield* call("POST", "/split/accounts", {
        token: m.token,
        body: [{ address: yield* bankHolder("Elena") }]
      })
      const request_id = (created.body as Json).data.request_id as string
      const theirs = yield* call("POST", "/split/accounts/verify", {
        token: other.token,
        body: { request_id, code: yield* secondFactorCode(request_id) }
      })
      expect(theirs.status).toBe(404)
      expect(theirs.body).toEqual(errorBody(404, "verification_request.not.found"))
    })
  )

  it.effect("GET /split/accounts lists the caller's accounts; disabling one marks it DISABLED", () =>
    Effect.gen(function* () {
      const m = yield* withToken("spl_a5")
      const other = yield* withToken("spl_a6")
      const [id] = yield* activeAccounts(m.token, yield* bankHolder("Fabio"))
      yield* activeAccounts(other.token, yield* bankHolder("Gala"))
      const list = yield* call("GET", "/split/accounts", { token: m.token })
      expect(list.status).toBe(200)
      const body: Json = list.body
      expect(body).toMatchObject({ message: "payout_accounts.found", error: false, code: 200 })
      expect((body.data.accounts as Array<Json>).map((a) => [a.account_id, a.status])).toEqual([
        [id, "ACTIVE"]
      ])
      const disabled = yield* call("POST", `/split/accounts/${id}/disable`, { token: m.token })
      expect(disabled.status).toBe(200)
      expect(disabled.body).toMatchObject({
        message: "payout_account.disabled",
        error: false,
        code: 200,
        data: { account_id: id, status: "DISABLED", disabled_timestamp: expect.any(String) }
      })
      const theirs = yield* call("POST", `/split/accounts/${id}/disable`, { token: other.token })
      expect(theirs.status).toBe(404)
      expect((theirs.body as Json).error).toBe(true)
      const unknown = yield* call("POST", "/split/accounts/pacc_nope/disable", { token: m.token })
      expect(unknown.status).toBe(404)
    })
  )
})

layer(serverLayer())("POST /split/payments/{id}/payouts", (it) => {
  it.effect("an instruction over the balance is 409 split.balance.insufficient", () =>
    Effect.gen(function* () {
      const m = yield* withToken("spl_i1")
      const split = yield* fundedSplit(m.token, "order-1")
      const [a, b] = yield* activeAccounts(m.token, yield* bankHolder("Hugo"), yield* bankHolder("Ines"))
      const r = yield* call("POST", `/split/payments/${split.split_payment_id}/payouts`, {
        token: m.token,
        body: {
          payouts: [
            { account_id: a, amount: 500 },
            { account_id: b, amount: 487.91 }
          ]
        }
      })
      expect(r.status).toBe(409)
      expect(r.body).toEqual(errorBody(409, "split.balance.insufficient"))
      const read = yield* call("GET", `/split/payments/${split.split_payment_id}`, { token: m.token })
      expect((read.body as Json).data).toMatchObject({ payout_status: null, balance: "987.90", payouts: [] })
    })
  )

  it.effect("accepts one instruction: ON_HOLD for 12 hours, balance held; a second one is 409", () =>
    Effect.gen(function* () {
      const m = yield* withToken("spl_i2")
      const split = yield* fundedSplit(m.token, "order-2")
      const [a, b] = yield* activeAccounts(m.token, yield* bankHolder("Juan"), yield* bankHolder("Karina"))
      const now = yield* DateTime.now
      const r = yield* call("POST", `/split/payments/${split.split_payment_id}/payouts`, {
        token: m.token,
        body: {
          payouts: [
            { account_id: a, amount: 500 },
            { account_id: b, amount: 400.5 }
          ]
        }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(body).toMatchObject({ message: "split.payouts.accepted", error: false, code: 200 })
      expect(body.data).toMatchObject({
        split_payment_id: split.split_payment_id,
        payment_status: "RECEIVED",
        payout_status: "ON_HOLD",
        hold_until: iso(DateTime.add(now, { hours: 12 })),
        balance: "87.40"
      })
      expect(body.data.payouts).toEqual([
        {
          payout_id: expect.any(String),
          account_id: a,
          amount: "500.00",
          status: "PENDING"
        },
        {
          payout_id: expect.any(String),
          account_id: b,
          amount: "400.50",
          status: "PENDING"
        }
      ])
      const second = yield* call("POST", `/split/payments/${split.split_payment_id}/payouts`, {
        token: m.token,
        body: { payouts: [{ account_id: a, amount: 10 }] }
      })
      expect(second.status).toBe(409)
      expect(second.body).toEqual(errorBody(409, "split.payouts.already_instructed"))
    })
  )

  it.effect("a disabled account is 409 payout_account.not.active; a repeated account is 400", () =>
    Effect.gen(function* () {
      const m = yield* withToken("spl_i3")
      const split = yield* fundedSplit(m.token, "order-3")
      const [a, b] = yield* activeAccounts(m.token, yield* bankHolder("Laura"), yield* bankHolder("Mario"))
      yield* call("POST", `/split/accounts/${b}/disable`, { token: m.token })
      const disabled = yield* call("POST", `/split/payments/${split.split_payment_id}/payouts`, {
        token: m.token,
        body: { payouts: [{ account_id: b, amount: 10 }] }
      })
      expect(disabled.status).toBe(409)
      expect(disabled.body).toEqual(errorBody(409, "payout_account.not.active"))
      const repeated = yield* call("POST", `/split/payments/${split.split_payment_id}/payouts`, {
        token: m.token,
        body: {
          payouts: [
            { account_id: a, amount: 10 },
            { account_id: a, amount: 20 }
          ]
        }
      })
      expect(repeated.status).toBe(400)
      expect(repeated.body).toEqual(errorBody(400, "request.invalid", { field: "payouts[1].account_id" }))
      const zero = yield* call("POST", `/split/payments/${split.split_payment_id}/payouts`, {
        token: m.token,
        body: { payouts: [{ account_id: a, amount: 0 }] }
      })
      expect(zero.status).toBe(400)
      expect((zero.body as Json).message).toBe("request.invalid")
    })
  )
})

// The hold moves the clock by 12 hours: its own server, so no other split becomes due.
layer(serverLayer())("the 12-hour hold", (it) => {
  it.effect("after the 12-hour hold the job sends the payouts: SUCCESS, money at the bank", () =>
    Effect.gen(function* () {
      const m = yield* merchant("spl_i4")
      const token = yield* tokenFor("spl_i4", m.client_id, m.client_secret)
      const split = yield* fundedSplit(token, "order-4")
      const a = yield* bankHolder("Nora")
      const [accountA] = yield* activeAccounts(token, a)
      const r = yield* call("POST", `/split/payments/${split.split_payment_id}/payouts`, {
        token,
        body: { payouts: [{ account_id: accountA, amount: 987.9 }] }
      })
      expect(r.status).toBe(200)
      const jobs = yield* Jobs.Jobs
      // Nothing moves before the hold ends.
      yield* TestClock.adjust(Duration.subtract(Duration.hours(12), Duration.millis(1)))
      expect((yield* jobs.runDue()).splits.finished).toBe(0)
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* jobs.runDue()).splits.finished).toBe(1)
      const fresh = yield* tokenFor("spl_i4", m.client_id, m.client_secret)
      const read = yield* call("GET", `/split/payments/${split.split_payment_id}`, { token: fresh })
      const data = (read.body as Json).data
      expect(data).toMatchObject({ payout_status: "SUCCESS", balance: "0.00" })
      expect(data.payouts).toEqual([
        expect.objectContaining({
          account_id: accountA,
          amount: "987.90",
          status: "SUCCESS",
          bank_transaction_id: expect.any(String),
          executed_timestamp: expect.any(String)
        })
      ])
      const sent = yield* (yield* SandboxBank.SandboxBank).sentTransfers
      expect(sent.map((t) => [t.to, t.amount.minor])).toEqual([[a, 98790n]])
      const events = (yield* (yield* Outbox.Outbox).list(0, 100_000)).map((e) => e.event)
      expect(events.find((e) => e.type === "split.payouts_result")?.payload).toEqual({
        message: "split.payouts_result",
        split_payment_id: split.split_payment_id,
        external_id: "order-4",
        payout_status: "SUCCESS"
      })
    })
  )
})
