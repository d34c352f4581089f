/**
 * BIND's documentation's own JSON examples (`test/fixtures`, kept verbatim from its pages) decode,
 * and the simulator emits exactly their shapes; the notification body is read liberally where
 * money does not depend on a field and strictly where it does, a refusal naming the field without
 * the schema's internals; the optional shared secret.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Redacted, Schema } from "effect"
import { readFileSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { BindWebhook } from "../src/index.js"
import * as Api from "../src/internal/api.js"
import { BindSimulator } from "../src/testing.js"

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the pages' examples, read as loose JSON
const doc = (name: string) => JSON.parse(fixture(name)) as Record<string, any>

/** The shape of a JSON value: its keys, recursively, and the kind of each leaf. */
const shape = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.length === 0
      ? []
      : [shape(v[0])]
    : v !== null && typeof v === "object"
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, shape((v as Record<string, unknown>)[k])])
        )
      : v === null
        ? "null"
        : typeof v

/** A receiver that keeps every body posted to it. */
const receiver = Effect.acquireRelease(
  Effect.async<{ url: string; bodies: Array<string>; server: http.Server }>((resume) => {
    const bodies: Array<string> = []
    const server = http.createServer((req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c.toString()))
      req.on("end", () => {
        bodies.push(body)
        res.writeHead(200).end()
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resume(
        Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bind`,
          bodies,
          server
        })
      )
    )
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((done) => server.close(() => done())))
)

const incoming = (body: unknown) => {
  const parsed = BindWebhook.parse(JSON.stringify(body))
  return Either.map(parsed, (n) => {
    if (n._tag !== "Incoming") throw new Error(`not incoming: ${n._tag}`)
    return n
  })
}

describe("BIND's documented examples", () => {
  it("the incoming-transfer event in a CVU decodes to the transfer it describes", () => {
    const notice = Either.getOrThrow(incoming(doc("transfer.cvu.received.json")))
    expect(notice.redeliveries).toBe(0)
    expect(notice.transfer).toMatchObject({
      bank_transaction_id: "Z6OLMDN3VODEJKO62E7RQ5",
      cvu: "0000184302080000092603",
      amount: { minor: 7_707_000n, currency: "ARS" },
      sender_cuit: "27265540703",
      sender_name: "Maria Nicolasa Acuna",
      sender_account: "0000003100069103363490"
    })
  })

  it("the outgoing-transfer event decodes to BIND's id and status", () => {
    const notice = Either.getOrThrow(BindWebhook.parse(fixture("transfer.outgoing.json")))
    expect(notice).toEqual({ _tag: "Outgoing", id: "1-30717449076-000000092637177-1", status: "COMPLETED" })
  })

  it("the incoming-transfer event in the collecting CBU decodes, and is not one cobro credits", () => {
    const event = doc("transfer.cbu.received.json")
    expect(Schema.decodeUnknownSync(Api.Event)(event).type).toBe(Api.CBU_RECEIVED)
    expect(Schema.decodeUnknownSync(Api.TransferData)(event["data"]).id).toBe("46YGOW9MJGJ4ODP9EXD8J5")
    expect(Either.getOrThrow(BindWebhook.parse(fixture("transfer.cbu.received.json")))).toEqual({
      _tag: "Ignored",
      type: "transfer.cbu.received"
    })
  })

  it("the request examples decode with the wire's schemas", () => {
    expect(Schema.decodeUnknownSync(Api.CreateCvuRequest)(doc("crear-cvu.request.json"))).toEqual({
      client_id: "191220231",
      cuit: "30717449076",
      name: "Nombre de la entidad"
    })
    expect(Schema.decodeUnknownSync(Api.AliasRequest)(doc("asignar-alias.request.json")).label).toBe(
      "alias20122023"
    )
    expect(
      Schema.decodeUnknownSync(Api.ConciliateRequest)(doc("conciliar-transferencia.request.json"))
        .transactions_ids
    ).toHaveLength(3)
    const transfer = doc("realizar-transferencia.request.json")
    expect(transfer["origin_id"].length).toBeLessThanOrEqual(Api.ORIGIN_ID_MAX)
    expect(Api.concepts).toContain(transfer["concept"])
  })

  it.live("the simulator takes the request examples as BIND would, and answers in the documented shape", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const sim = yield* BindSimulator.scoped({
          entity: { cuit: "30717449076", name: "Nombre de la entidad" }
        })
        const login = yield* Effect.promise(() =>
          fetch(sim.tokenUrl, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({
              client_id: sim.clientId,
              client_secret: sim.clientSecret,
              grant_type: "client_credentials",
              scope: sim.scope
            })
          }).then((r) => r.json() as Promise<Record<string, unknown>>)
        )
        expect(Object.keys(login).sort()).toEqual([
          "access_token",
          "expires_in",
          "ext_expires_in",
          "token_type"
        ])
        const call = (path: string, body: unknown) =>
          Effect.promise(() =>
            fetch(`${sim.url}${path}`, {
              method: "POST",
              headers: {
                authorization: `Bearer ${String(login["access_token"])}`,
                "content-type": "application/json"
              },
              body: JSON.stringify(body)
            }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }))
          )
        const created = yield* call(Api.paths.createCvu, doc("crear-cvu.request.json"))
        expect(created.status).toBe(200)
        expect(Object.keys(created.body).sort()).toEqual(["cvu", "label", "reactivated"])
        const sent = yield* call(Api.paths.transfers, doc("realizar-transferencia.request.json"))
        expect(sent.status).toBe(200)
        const answer = Schema.decodeUnknownSync(Api.TransferData)(sent.body)
        expect(answer.details?.origin_id).toBe("T0291220231")
        // The answer has every field the page's response table lists.
        expect(Object.keys(sent.body)).toEqual(
          expect.arrayContaining([
            "id",
            "type",
            "from",
            "counterparty",
            "details",
            "transaction_ids",
            "status",
            "start_date",
            "end_date",
            "charge"
          ])
        )
        const conciliated = yield* call(Api.paths.conciliate, doc("conciliar-transferencia.request.json"))
        expect(conciliated.body).toEqual({
          conciliadas: [],
          conError: ["M67REZ8NP3VDK6194KVGOP", "8PDX4OGNY83W7KVN0L6EY5", "746YGOW9MPRVW34543EXD8J5"],
          noConciliadas: []
        })
      })
    )
  )

  it.live("the simulator's events have exactly the documented examples' shapes", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const sim = yield* BindSimulator.scoped()
        const { url, bodies } = yield* receiver
        sim.setWebhook({ url })
        const cvu = "0000184302080000092603"
        yield* Effect.promise(() =>
          sim.receive({
            cvu,
            amount: 77070,
            sender: { cuit: "27265540703", name: "Maria", cbu: "0000003100069103363490" }
          })
        )
        const event = JSON.parse(bodies[0]!) as Record<string, unknown>
        expect(shape(event)).toEqual(shape(doc("transfer.cvu.received.json")))
        // The outgoing event, once a transfer out is final.
        sim.faults.holdTransfers = true
        sim.faults.notifyOutgoing = true
        const token = yield* Effect.promise(() =>
          fetch(sim.tokenUrl, {
            method: "POST",
            body: new URLSearchParams({
              client_id: sim.clientId,
              client_secret: sim.clientSecret,
              grant_type: "client_credentials",
              scope: sim.scope
            })
          }).then((r) => r.json() as Promise<{ access_token: string }>)
        )
        yield* Effect.promise(() =>
          fetch(`${sim.url}${Api.paths.transfers}`, {
            method: "POST",
            headers: { authorization: `Bearer ${token.access_token}` },
            body: fixture("realizar-transferencia.request.json")
          }).then((r) => r.arrayBuffer())
        )
        sim.settle("T0291220231", "COMPLETED")
        yield* Effect.promise(async () => {
          for (let i = 0; i < 100 && bodies.length < 2; i++) await new Promise((r) => setTimeout(r, 10))
        })
        const outgoing = JSON.parse(bodies[1]!) as Record<string, unknown>
        const expected = doc("transfer.outgoing.json")
        // Both examples' `counterparty` and `details` have the same keys; BIND's outgoing example has no bank code.
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- loose JSON
        const drop = (v: Record<string, any>) => ({
          ...v,
          data: { ...v["data"], counterparty: { ...v["data"]["counterparty"], bank_routing: {} } }
        })
        expect(shape(drop(outgoing))).toEqual(shape(drop(expected)))
      })
    )
  )
})

describe("BIND's notification body", () => {
  const base = doc("transfer.cvu.received.json")
  const withData = (patch: Record<string, unknown>) => ({ ...base, data: { ...base["data"], ...patch } })

  it("is read liberally where money does not depend on a field", () => {
    const variants = [
      { ...base, unknown_field: { nested: true }, redeliveries: 3 },
      withData({
        counterparty: { ...base["data"]["counterparty"], bank_routing: { scheme: null, address: null } }
      }),
      withData({ counterparty: { ...base["data"]["counterparty"], bank_routing: undefined } }),
      withData({ counterparty: { ...base["data"]["counterparty"], id: 27265540703 } }),
      withData({
        charge: {
          summary: "VAR Pago de la factura 0001-00001234 de marzo",
          value: { currency: "ARS", amount: 77070 }
        }
      }),
      withData({
        counterparty: {
          ...base["data"]["counterparty"],
          account_routing: { scheme: "LABEL", address: "maria.alias" }
        }
      })
    ]
    for (const v of variants) {
      const read = incoming(v)
      expect(Either.isRight(read) && read.right.transfer.amount.minor).toBe(7_707_000n)
    }
    expect(Either.getOrThrow(incoming(variants[0])).redeliveries).toBe(3)
  })

  it("passes a sender CUIT with a bad check digit through, for the engine to credit and flag", () => {
    const read = incoming(withData({ counterparty: { ...base["data"]["counterparty"], id: "20123456780" } }))
    expect(Either.isRight(read) && read.right.transfer.sender_cuit).toBe("20123456780")
    expect(Either.isRight(read) && read.right.transfer.amount.minor).toBe(7_707_000n)
  })

  it("is strict on the transfer's id, status, currency, amount and our CVU, naming the field", () => {
    const refused: Array<[unknown, string]> = [
      [withData({ id: undefined }), "data.id"],
      [withData({ status: "PENDING" }), "data.status"],
      [
        withData({ charge: { summary: "VAR", value: { currency: "USD", amount: 1 } } }),
        "data.charge.value.currency"
      ],
      [
        withData({ charge: { summary: "VAR", value: { currency: "ARS", amount: "77070" } } }),
        "data.charge.value"
      ],
      [
        withData({ charge: { summary: "VAR", value: { currency: "ARS", amount: 1e17 } } }),
        "data.charge.value.amount"
      ],
      [
        withData({ charge: { summary: "VAR", value: { currency: "ARS", amount: 10.001 } } }),
        "data.charge.value.amount"
      ],
      [
        withData({ charge: { summary: "VAR", value: { currency: "ARS", amount: -5 } } }),
        "data.charge.value.amount"
      ],
      [
        withData({ details: { origin_credit: { cvu: "0000184302080000092604" } } }),
        "data.details.origin_credit.cvu"
      ],
      [withData({ details: { origin_debit: null, origin_credit: null } }), "data.details.origin_credit.cvu"],
      [{ id: "x", data: {} }, "type"]
    ]
    for (const [body, field] of refused) {
      const read = BindWebhook.parse(JSON.stringify(body))
      expect(Either.isLeft(read) && [read.left.reason, read.left.field]).toEqual(["malformed", field])
      // The message is ours, never the schema's report (that goes to the log as `detail`).
      expect(Either.isLeft(read) && read.left.message).not.toMatch(/Expected|└|readonly/)
    }
    expect(Either.isLeft(BindWebhook.parse("not json"))).toBe(true)
  })

  it("the shared secret is an optional layer: checked when configured, in constant time", () => {
    const settings = {
      webhookSecret: Option.some(Redacted.make("hook-secret")),
      webhookSecretHeader: "x-bind-webhook-secret"
    }
    expect(
      Either.isRight(BindWebhook.authenticate(settings, { "x-bind-webhook-secret": "hook-secret" }))
    ).toBe(true)
    expect(
      Either.isLeft(BindWebhook.authenticate(settings, { "x-bind-webhook-secret": "hook-secreT" }))
    ).toBe(true)
    expect(Either.isLeft(BindWebhook.authenticate(settings, {}))).toBe(true)
    expect(Either.isRight(BindWebhook.authenticate({ ...settings, webhookSecret: Option.none() }, {}))).toBe(
      true
    )
  })
})
