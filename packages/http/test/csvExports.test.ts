/**
 * CSV encoding (RFC 4180 quoting, formula injection); `CsvExports` called as a host page calls
 * it (a principal, decoded filters, no route); and a CSV export that fails while it is
 * being sent: the 200 and part of the file are out, so the connection must be cut and the
 * failure logged; a file that ended cleanly would look like a complete, shorter export.
 */
import { HttpApiBuilder, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Engine, Errors, Ids, PaymentRequest, Payments, Principal } from "@cobro/core"
import { PaymentRepository } from "@cobro/core/ports"
import { Effect, Either, Layer, Logger, Schema } from "effect"
import * as http from "node:http"
import { CobroHttp, CsvExports } from "../src/index.js"
import { field, neutralize, records } from "../src/internal/csv/encode.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { merchant, tokenFor } from "./support.js"

/** The memory engine whose payments port dies on every page after the first. */
const failingSecondPage = Layer.effect(
  PaymentRepository.PaymentRepository,
  Effect.map(PaymentRepository.PaymentRepository, (repo) => {
    let pages = 0
    return PaymentRepository.PaymentRepository.of({
      ...repo,
      page: (query, cursor, size) =>
        ++pages > 1 ? Effect.dieMessage("the database went away") : repo.page(query, cursor, size)
    })
  })
)

const logged: Array<string> = []
const collect = Logger.make(({ logLevel, message }) => {
  logged.push(`${logLevel.label} ${String(message)}`)
})

const server = HttpApiBuilder.serve().pipe(
  Layer.provide(CobroHttp.layer()),
  Layer.provideMerge(
    SandboxEngine.layerSandbox(failingSecondPage.pipe(Layer.provideMerge(Engine.layerMemoryStorage)))
  ),
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provide(Logger.replace(Logger.defaultLogger, collect))
)

/** GET with node's own client: how the response ended, and what arrived. */
const get = (port: number, path: string, token: string) =>
  Effect.async<{ readonly status: number; readonly ended: "end" | "error"; readonly body: string }>(
    (resume) => {
      const chunks: Array<Buffer> = []
      const request = http.get(
        { host: "127.0.0.1", port, path, headers: { authorization: `Bearer ${token}` } },
        (response) => {
          const done = (ended: "end" | "error") =>
            resume(
              Effect.succeed({
                status: response.statusCode ?? 0,
                ended,
                body: Buffer.concat(chunks).toString()
              })
            )
          response.on("data", (c: Buffer) => chunks.push(c))
          response.once("end", () => done("end"))
          response.once("error", () => done("error"))
        }
      )
      request.once("error", () => resume(Effect.succeed({ status: 0, ended: "error", body: "" })))
    }
  )

describe("CSV encoding", () => {
  it("quotes a field with a comma, a quote, CR or LF, its quotes doubled; leaves others as they are", () => {
    expect(field("plain text ñ €")).toBe("plain text ñ €")
    expect(field("a,b")).toBe('"a,b"')
    expect(field('say "hi"')).toBe('"say ""hi"""')
    expect(field("two\nlines")).toBe('"two\nlines"')
    expect(field("cr\r")).toBe('"cr\r"')
    expect(field("")).toBe("")
    expect(field(" padded ")).toBe(" padded ")
  })

  it("neutralizes text that a spreadsheet would run as a formula", () => {
    for (const start of ["=", "+", "-", "@", "\t", "\r"])
      expect(neutralize(`${start}1+1`)).toBe(`'${start}1+1`)
    expect(neutralize("1-1")).toBe("1-1")
    expect(neutralize("'=1")).toBe("'=1")
  })

  it("writes CRLF records, neutralizing only the columns marked as text", () => {
    const columns = [
      { name: "amount", value: (r: { amount: string; note?: string }) => r.amount },
      { name: "note", value: (r: { amount: string; note?: string }) => r.note, text: true }
    ]
    expect(records(columns, [{ amount: "-12.50", note: '=HYPERLINK("x")' }, { amount: "1.00" }])).toBe(
      '-12.50,"\'=HYPERLINK(""x"")"\r\n1.00,\r\n'
    )
  })
})

describe("CsvExports, called by a host's own page", () => {
  it.effect("answers the streaming file for a principal, and a domain error for another user's data", () =>
    Effect.gen(function* () {
      yield* merchant("page1")
      yield* merchant("page2")
      const payments = yield* Payments.Payments
      const create = (user_id: string, external_id: string) =>
        payments.create(
          Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
            user_id,
            external_id,
            price: { amount: 99.9, currency: "ARS" },
            payment_options: ["transfer"],
            motive: 'café, "dos"'
          })
        )
      const mine = yield* create("page1", "mine")
      yield* create("page2", "theirs")
      const session = Principal.Principal.User({ user_id: Ids.UserId.make("page1") })
      const filters = Schema.decodeUnknownSync(CsvExports.PaymentsExportParams)({ user_id: "page1" })
      const request = HttpServerRequest.fromWeb(new Request("http://dashboard.local/panel/pagos.csv"))
      const response = yield* CsvExports.payments(session, filters).pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, request)
      )
      const web = HttpServerResponse.toWeb(response)
      expect(web.headers.get("content-type")).toBe("text/csv; charset=utf-8; header=present")
      const lines = (yield* Effect.promise(() => web.text())).split("\r\n")
      expect(lines).toHaveLength(3)
      expect(lines[1]!.startsWith(`${mine.id},mine,PENDING,99.90,ARS,99.90,0.00,0.00,0,`)).toBe(true)
      expect(lines[1]).toContain(',"café, ""dos""",')
      expect(lines[2]).toBe("")

      // The page's own further filter (a text search), applied as rows are read.
      yield* create("page1", "other")
      const searched = yield* CsvExports.payments(session, filters, (p) =>
        p.external_id.includes("oth")
      ).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request))
      const found = (yield* Effect.promise(() => HttpServerResponse.toWeb(searched).text())).split("\r\n")
      expect(found.map((line) => line.split(",")[1])).toEqual(["external_id", "other", undefined])

      const refused = yield* CsvExports.payments(
        session,
        Schema.decodeUnknownSync(CsvExports.PaymentsExportParams)({ user_id: "page2" })
      ).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request), Effect.either)
      expect(Either.isLeft(refused) && refused.left).toBeInstanceOf(Errors.NotFound)
    }).pipe(Effect.provide(SandboxEngine.layerMemory()))
  )
})

describe("a CSV export that fails while it is being sent", () => {
  it.scoped("cuts the connection and logs the failure: no clean end of a partial file", () =>
    Effect.gen(function* () {
      const created = yield* merchant("m1")
      const token = yield* tokenFor("m1", created.client_id, created.client_secret)
      const payments = yield* Payments.Payments
      // More than one storage page (200): the first is sent, the second fails.
      for (let i = 0; i < 201; i++) {
        yield* payments.create(
          Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
            user_id: "m1",
            external_id: `order-${i}`,
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"]
          })
        )
      }
      const address = (yield* HttpServer.HttpServer).address
      const port = address._tag === "TcpAddress" ? address.port : 0
      const reply = yield* get(port, "/payments/export.csv?user_id=m1", token)
      expect(reply.ended).toBe("error")
      expect(reply.status).toBe(200)
      // The header and the first page did go out.
      const lines = reply.body.split("\r\n")
      expect(lines[0]!.startsWith("payment_id,external_id,")).toBe(true)
      expect(lines.length).toBeGreaterThan(200)
      expect(lines.length).toBeLessThan(203)
      expect(logged).toContainEqual(
        "ERROR GET /payments/export.csv failed while its payments export was being sent"
      )
      const again = yield* get(port, "/payments/VAR-m1-order-0/public", token)
      expect([again.status, again.ended]).toEqual([200, "end"])
    }).pipe(Effect.provide(server))
  )
})
