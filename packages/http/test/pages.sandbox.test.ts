/**
 * The payer's page in sandbox mode over HTTP, as a browser receives it: the badge, the CVU's
 * holder, the "Simular transferencia" form and what `POST /pay/{id}/simulate` accepts (only its
 * own page's form: the CSRF cookie and field) and refuses; and none of it without the faucet.
 */
import { HttpApiBuilder, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import {
  Crypto,
  Engine,
  EngineConfig,
  ExchangeRates,
  FeePolicy,
  Ids,
  Payments,
  PaymentRequest,
  SecondFactor
} from "@cobro/core"
import { Effect, Layer, Schema } from "effect"
import { CobroHttp } from "../src/index.js"
import { SandboxBank } from "@cobro/bank-sandbox"
import { merchant, raw, serverLayer } from "./support.js"

const createPayment = (user_id: string) =>
  Effect.flatMap(Payments.Payments, (payments) =>
    payments.create(
      Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
        user_id,
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"]
      })
    )
  )

const pagePath = (id: string) => `/pay/${encodeURIComponent(id)}`

/** The page: its HTML, the CSRF cookie it set and the form's token. */
const openPage = (id: string) =>
  Effect.gen(function* () {
    const response = yield* raw(HttpClientRequest.get(pagePath(id)))
    const setCookie = String(response.headers["set-cookie"] ?? "")
    const cookie = /cobro_csrf=([^;]+)/.exec(setCookie)?.[1]
    const field = /name="csrf_token" value="([^"]+)"/.exec(response.text)?.[1]
    return { status: response.status, html: response.text, setCookie, cookie, field }
  })

const simulate = (id: string, form: Record<string, string>, cookie?: string, contentType?: string) =>
  raw(
    HttpClientRequest.post(`${pagePath(id)}/simulate`).pipe(
      HttpClientRequest.bodyText(
        new URLSearchParams(form).toString(),
        contentType ?? "application/x-www-form-urlencoded"
      ),
      cookie === undefined ? (r) => r : HttpClientRequest.setHeader("cookie", `cobro_csrf=${cookie}`)
    )
  )

const statusOf = (id: string) =>
  Effect.map(
    Effect.flatMap(Payments.Payments, (p) => p.getPublic(Ids.PaymentId.make(id))),
    (v) => v.payment_status
  )

layer(serverLayer({ rateLimits: false }))("the payer's page in sandbox", (it) => {
  it.effect("shows the badge, the holder the bank names and the form with the amount due", () =>
    Effect.gen(function* () {
      yield* merchant("pgs_a")
      const payment = yield* createPayment("pgs_a")
      const page = yield* openPage(payment.id)
      expect(page.status).toBe(200)
      expect(page.html).toContain('id="sandbox-badge"')
      expect(page.html).toMatch(/<dd id="holder">Tienda pgs_a<\/dd>/)
      expect(page.html).toMatch(/<dd id="holder-cuit">30-71234567-1<\/dd>/)
      expect(page.html).toContain('value="1500.00"')
      expect(page.html).toContain(`action="${encodeURIComponent(payment.id)}/simulate"`)
      // The token is in a SameSite=Strict, HttpOnly cookie and repeated in the form.
      expect(page.setCookie).toMatch(/SameSite=Strict/i)
      expect(page.setCookie).toMatch(/HttpOnly/i)
      expect(page.field).toBe(page.cookie)
    })
  )

  it.effect("a simulation from the page's own form pays this payment and goes back to the page", () =>
    Effect.gen(function* () {
      yield* merchant("pgs_b")
      const payment = yield* createPayment("pgs_b")
      const page = yield* openPage(payment.id)
      const answer = yield* simulate(payment.id, { csrf_token: page.field!, amount: "1500" }, page.cookie)
      expect(answer.status).toBe(303)
      expect(answer.headers["location"]).toBe(`../${encodeURIComponent(payment.id)}`)
      expect(yield* statusOf(payment.id)).toBe("SUCCESS")
      // Paid: the page has no form any more.
      expect((yield* openPage(payment.id)).html).not.toContain('id="simulate"')
    })
  )

  it.effect("refuses without the cookie, with a mismatched token, a bad amount or another content type", () =>
    Effect.gen(function* () {
      yield* merchant("pgs_c")
      const payment = yield* createPayment("pgs_c")
      const page = yield* openPage(payment.id)
      const cases: ReadonlyArray<readonly [ReturnType<typeof simulate>, number, string]> = [
        [simulate(payment.id, { csrf_token: page.field!, amount: "1500" }), 403, "El formulario venció"],
        [simulate(payment.id, { amount: "1500" }, page.cookie), 403, "El formulario venció"],
        [
          simulate(payment.id, { csrf_token: `${page.field!}x`, amount: "1500" }, `${page.field!}x`),
          403,
          "venció"
        ],
        [simulate(payment.id, { csrf_token: page.field!, amount: "0" }, page.cookie), 400, "Monto no válido"],
        [
          simulate(payment.id, { csrf_token: page.field!, amount: "1.500,00" }, page.cookie),
          400,
          "Monto no válido"
        ],
        [
          simulate(payment.id, { csrf_token: page.field!, amount: "-5" }, page.cookie),
          400,
          "Monto no válido"
        ],
        [simulate(payment.id, { csrf_token: page.field! }, page.cookie), 400, "Monto no válido"],
        [
          simulate(payment.id, { csrf_token: page.field!, amount: "1500" }, page.cookie, "text/plain"),
          415,
          "Formulario no válido"
        ],
        [
          simulate("VAR-nobody-x", { csrf_token: page.field!, amount: "1500" }, page.cookie),
          404,
          "No encontramos"
        ]
      ]
      for (const [request, status, text] of cases) {
        const answer = yield* request
        expect([answer.status, answer.text.includes(text)]).toEqual([status, true])
      }
      expect(yield* statusOf(payment.id)).toBe("PENDING")
    })
  )
})

/** The same server over an engine without the sandbox's `Faucet` (a production engine). */
const withoutFaucet = HttpApiBuilder.serve().pipe(
  Layer.provide(CobroHttp.layer({ rateLimits: false })),
  Layer.provideMerge(
    Engine.services.pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          Engine.layerMemoryStorage,
          FeePolicy.layer(),
          ExchangeRates.layerFixed(),
          Crypto.layerWebCrypto(Crypto.sandboxKey),
          EngineConfig.layer(),
          SandboxBank.layer,
          SecondFactor.layerSandbox
        )
      )
    )
  ),
  Layer.provideMerge(NodeHttpServer.layerTest)
)

layer(withoutFaucet)("the payer's page without the faucet", (it) => {
  describe("production", () => {
    it.effect("has no badge and no form, sets no cookie, and the simulate route is a 404 page", () =>
      Effect.gen(function* () {
        yield* merchant("pgs_p")
        const payment = yield* createPayment("pgs_p")
        const page = yield* openPage(payment.id)
        expect(page.status).toBe(200)
        expect(page.html).not.toContain("sandbox-badge")
        expect(page.html).not.toContain('id="simulate"')
        expect(page.setCookie).toBe("")
        // The holder is still shown: it comes from the bank, not from the sandbox.
        expect(page.html).toMatch(/<dd id="holder">Tienda pgs_p<\/dd>/)
        const answer = yield* simulate(payment.id, { csrf_token: "x", amount: "1500" }, "x")
        expect(answer.status).toBe(404)
        expect(yield* statusOf(payment.id)).toBe("PENDING")
      })
    )
  })
})
