/**
 * `GET /pay/{paymentId}`: the payer's page at `payment_url`, and the page for a link that names no
 * payment. In sandbox mode (the engine has the `Faucet`) the page says so and carries a
 * "Simular transferencia" form, `POST /pay/{paymentId}/simulate`: a faucet transfer to this
 * payment's CVU only, behind the pages' CSRF check, answered with a 303 back to the page.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { BankProvider, Ids, MerchantClocks, Money, type Payment, Payments } from "@cobro/core"
import { PaymentRepository } from "@cobro/core/ports"
import { Faucet } from "@cobro/bank-sandbox"
import { Cache, DateTime, Duration, Effect, Either, Exit, Option, Schema } from "effect"
import * as Csrf from "./csrf.js"
import * as Layout from "./layout.js"
import * as PaymentPage from "./payment.js"
import type { PageKit } from "./shared.js"

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i
/** Pesos with an optional decimal point or comma and up to two decimals; no thousands separators. */
const AMOUNT = /^\d{1,12}(?:[.,]\d{1,2})?$/

/** How long a holder the bank named is reused, and how long the bank may take to name it. */
const HOLDER_TTL = Duration.minutes(10)
const HOLDER_TIMEOUT = Duration.seconds(3)

export const make = ({ newNonce, limited, tooMany, csrf, withCsrfCookie }: PageKit) =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments
    const repository = yield* PaymentRepository.PaymentRepository
    const faucet = yield* Effect.serviceOption(Faucet.Faucet)
    const bank = yield* Effect.serviceOption(BankProvider.BankProvider)

    // The CVU's holder as the bank reports it, cached per CVU (a page view costs no bank call
    // while it is fresh); a failed or slow lookup is not cached and leaves the holder out.
    const holders = yield* Cache.makeWith({
      capacity: 10_000,
      lookup: (cvu: string) =>
        Option.match(bank, {
          onNone: () => Effect.succeed(Option.none<BankProvider.AccountHolder>()),
          onSome: (b) =>
            b.lookupHolder(cvu).pipe(
              Effect.timeout(HOLDER_TIMEOUT),
              Effect.tapError((e) =>
                Effect.logWarning("payment page: the bank did not name the CVU's holder", e)
              ),
              Effect.option
            )
        }),
      timeToLive: (exit) => (Exit.isSuccess(exit) && Option.isSome(exit.value) ? HOLDER_TTL : Duration.zero)
    })

    const notFoundPayment = (nonce: string) =>
      Layout.messagePage({
        nonce,
        status: 404,
        title: "No encontramos este cobro",
        message: "El link de pago no existe o está incompleto.",
        hint: "Revisá el link que te pasó el comercio o pedile uno nuevo."
      })

    const page = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const nonce = yield* newNonce
      const limit = yield* limited(request)
      if (Option.isSome(limit)) return tooMany(nonce, limit.value)
      const params = yield* HttpRouter.params
      const id = Schema.decodeUnknownOption(Ids.PaymentId)(params["paymentId"])
      if (Option.isNone(id)) return notFoundPayment(nonce)
      const view = yield* Effect.either(payments.getPublic(id.value))
      if (Either.isLeft(view)) return notFoundPayment(nonce)
      const payment = yield* repository.findById(id.value)
      // The merchant's clock (its sandbox test clock, once moved), on which the payment expires:
      // the page's countdown starts from the time left on it, not on real time.
      const now = yield* Option.match(payment, {
        onNone: () => DateTime.now,
        onSome: (p) => MerchantClocks.run(p.user_id)(DateTime.now)
      })
      const status = view.right.payment_status
      const shown: Payment.PaymentStatus =
        status === "PENDING" && !DateTime.lessThan(now, view.right.expiration_timestamp) ? "EXPIRED" : status
      const open = shown === "PENDING" || shown === "UNDERPAID"
      const holder = open ? yield* holders.get(view.right.quotes[0]!.address) : Option.none()
      // The form's token: set in the cookie of this answer, only where the form is shown.
      const token =
        open && Option.isSome(faucet)
          ? Option.some(yield* csrf.issue(request.cookies[Csrf.COOKIE]))
          : Option.none()
      const response = Layout.respond(
        PaymentPage.page({
          view: view.right,
          shown,
          received: Option.match(payment, {
            onNone: () => Money.zero("ARS"),
            onSome: (p) => p.totalReceived
          }),
          now,
          // Relative to `/pay/{id}`, so the page also works when the API is mounted under a prefix.
          publicUrl: `../payments/${encodeURIComponent(view.right.id)}/public`,
          nonce,
          holder: Option.match(holder, {
            onNone: () => null,
            onSome: (h) => ({ name: h.name, cuit: h.cuit })
          }),
          sandbox: Option.isNone(faucet)
            ? null
            : {
                action: `${encodeURIComponent(view.right.id)}/simulate`,
                csrf: Option.getOrElse(token, () => "")
              }
        }),
        { status: 200 }
      )
      return Option.isSome(token) ? withCsrfCookie(request, token.value)(response) : response
    })

    const refused = (nonce: string, status: number, title: string, message: string, back?: string) =>
      Layout.messagePage({
        nonce,
        status,
        title,
        message,
        ...(back === undefined ? {} : { hint: "Volvé a la página del cobro e intentá de nuevo." })
      })

    const simulate = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const nonce = yield* newNonce
      if (Option.isNone(faucet)) {
        return refused(
          nonce,
          404,
          "No encontramos esta página",
          "Simular transferencias es posible solo en sandbox."
        )
      }
      const limit = yield* limited(request)
      if (Option.isSome(limit)) return tooMany(nonce, limit.value)
      const params = yield* HttpRouter.params
      const id = Schema.decodeUnknownOption(Ids.PaymentId)(params["paymentId"])
      if (Option.isNone(id)) return notFoundPayment(nonce)
      if (!FORM_TYPE.test(request.headers["content-type"] ?? "")) {
        return refused(nonce, 415, "Formulario no válido", "Enviá el formulario desde la página del cobro.")
      }
      const body = yield* Effect.either(request.urlParamsBody)
      if (Either.isLeft(body)) {
        return refused(nonce, 400, "Formulario no válido", "Enviá el formulario desde la página del cobro.")
      }
      const field = (name: string) => body.right.find(([key]) => key === name)?.[1]
      if (!(yield* csrf.verify(field(Csrf.FIELD), request.cookies[Csrf.COOKIE]))) {
        return refused(
          nonce,
          403,
          "El formulario venció",
          "Por seguridad, la simulación se acepta solo desde la página del cobro abierta hace menos de dos horas.",
          "back"
        )
      }
      const amountText = (field("amount") ?? "").trim()
      if (!AMOUNT.test(amountText) || Number(amountText.replace(",", ".")) <= 0) {
        return refused(
          nonce,
          400,
          "Monto no válido",
          "Ingresá un monto en pesos mayor que cero, con hasta dos decimales (por ejemplo 1500 o 1500,50).",
          "back"
        )
      }
      const payment = yield* repository.findById(id.value)
      if (Option.isNone(payment)) return notFoundPayment(nonce)
      const sent = yield* Effect.either(
        faucet.value.send(
          payment.value.user_id,
          payment.value.cvu,
          new Faucet.FaucetRequest({ amount: Number(amountText.replace(",", ".")) })
        )
      )
      if (Either.isLeft(sent)) {
        return refused(
          nonce,
          sent.left._tag === "InvalidInput" ? 400 : 409,
          "No pudimos simular la transferencia",
          `El sandbox la rechazó (${sent.left.key}): ${sent.left.message}.`,
          "back"
        )
      }
      yield* Effect.logInfo("payment page: simulated transfer").pipe(
        Effect.annotateLogs({ payment_id: id.value, outcome: sent.right.outcome._tag })
      )
      // Back to the page (Post/Redirect/Get), which shows the new state.
      return HttpServerResponse.empty({
        status: 303,
        headers: { location: `../${encodeURIComponent(id.value)}`, "cache-control": "no-store" }
      })
    })

    return { page, simulate, notFound: Effect.map(newNonce, notFoundPayment) }
  })
