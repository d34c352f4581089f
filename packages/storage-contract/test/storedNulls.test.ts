/**
 * Optional fields without a value (`Wire.Omittable`) are stored without the key, and documents
 * stored before, which hold the key with `null`, still read back as the same values and are
 * sent without `null`: on SQLite and on Postgres.
 */
import { describe, expect, it } from "@effect/vitest"
import { BankAccount, Ids, Payment, Payments, Split } from "@cobro/core"
import { SplitRepository } from "@cobro/core/ports"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { pgAvailable, postgres, sqlite, type SqlBackend } from "../src/index.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { createRequest, seedUser, u1 } from "../src/scenarios/fixtures.js"

const available = await Effect.runPromise(pgAvailable)

/** The path of every `null` in a JSON value. */
const nullsIn = (value: unknown, path = ""): Array<string> => {
  if (value === null) return [path]
  if (Array.isArray(value)) return value.flatMap((v, i) => nullsIn(v, `${path}[${i}]`))
  if (typeof value === "object") {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => nullsIn(v, `${path}.${k}`))
  }
  return []
}

/** A stored document column as JSON (text on SQLite, JSON on Postgres). */
const parsed = (doc: unknown): Record<string, unknown> =>
  (typeof doc === "string" ? JSON.parse(doc) : doc) as Record<string, unknown>

const paymentOptionals = ["webhook_url", "redirect_url", "motive", "client_data", "team_id", "partner_id"]
const accountOptionals = ["partner_id", "label", "activation_timestamp", "disabled_timestamp"]

const roundTrip = (backend: SqlBackend) => {
  const storage = backend.storage()
  return Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* seedUser()
    const payments = yield* Payments.Payments
    const created = yield* payments.create(createRequest({ external_id: "bare" }))

    // A new document leaves the fields out.
    const [row] = yield* sql<{ doc: unknown }>`SELECT doc FROM cobro_payments WHERE id = ${created.id}`
    const doc = parsed(row!.doc)
    for (const field of paymentOptionals) expect(doc).not.toHaveProperty(field)
    expect(nullsIn(doc)).toEqual([])

    // A document written before, with each field `null` and a first motive change whose previous
    // value is `null`, reads as the same payment and is sent without a `null`.
    const changedAt = DateTime.formatIso(created.creation_timestamp)
    const legacy = {
      ...doc,
      ...Object.fromEntries(paymentOptionals.map((field) => [field, null])),
      metadata: {
        motive: [{ value: "x", previous: null, modified_by: u1, modification_timestamp: changedAt }]
      }
    }
    yield* sql`UPDATE cobro_payments SET doc = ${JSON.stringify(legacy)} WHERE id = ${created.id}`
    const read = yield* payments.get(u1, created.id)
    for (const field of paymentOptionals) expect(read[field as keyof Payment.Payment]).toBeNull()
    expect(read.metadata.motive[0]!.previous).toBeNull()
    expect(read.quotes).toEqual(created.quotes)
    const sent = yield* Schema.encode(Payment.Payment)(read)
    expect(nullsIn(sent)).toEqual([])
    expect(sent.metadata.motive[0]).toEqual({
      value: "x",
      modified_by: u1,
      modification_timestamp: changedAt
    })

    // A payout account: stored without its empty fields; an old document with nulls reads the same.
    const now = yield* DateTime.now
    const account = new Split.PayoutAccount({
      account_id: Ids.PayoutAccountId.make("pacc_legacy"),
      user_id: u1,
      partner_id: null,
      address: BankAccount.PayoutAddress.make(BankAccount.makeCbu("0170099", "0000000000001")),
      bank_account: BankAccount.makeCbu("0170099", "0000000000001"),
      holder_name: "Ana",
      holder_cuit: BankAccount.makeCuit("20", "40000001"),
      label: null,
      status: "PENDING_VERIFICATION",
      request_id: Ids.VerificationRequestId.make("vreq_legacy"),
      creation_timestamp: now,
      activation_timestamp: null,
      disabled_timestamp: null,
      last_modified_timestamp: now
    })
    const repo = yield* SplitRepository.SplitRepository
    yield* repo.insertAccounts([account])
    const [stored] = yield* sql<{
      doc: unknown
    }>`SELECT doc FROM cobro_payout_accounts WHERE account_id = ${account.account_id}`
    const accountDoc = parsed(stored!.doc)
    for (const field of accountOptionals) expect(accountDoc).not.toHaveProperty(field)
    expect(yield* repo.findAccount(account.account_id)).toEqual(Option.some(account))
    const oldAccount = {
      ...accountDoc,
      ...Object.fromEntries(accountOptionals.map((field) => [field, null]))
    }
    yield* sql`UPDATE cobro_payout_accounts SET doc = ${JSON.stringify(oldAccount)}
      WHERE account_id = ${account.account_id}`
    expect(yield* repo.findAccount(account.account_id)).toEqual(Option.some(account))
  }).pipe(Effect.provide(Layer.merge(SandboxEngine.layerSandbox(storage), storage)))
}

describe("stored documents and optional fields without a value", () => {
  it.effect("on SQLite", () => roundTrip(sqlite), 60_000)
  it.effect.skipIf(!available)("on Postgres", () => roundTrip(postgres), 60_000)
})
