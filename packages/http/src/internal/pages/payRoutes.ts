/**
 * `GET /pay/{paymentId}`: the payer's page at `payment_url`, and the page for a link that names no
 * payment.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Ids, Money, type Payment, PaymentRepository, Payments } from "@cobro/core"
import { DateTime, Effect, Either, Option, Schema } from "effect"
import * as Layout from "./layout.js"
import * as PaymentPage from "./payment.js"
import type { PageKit } from "./shared.js"

export const make = ({ newNonce, limited, tooMany }: PageKit) =>
  Effect.gen(function* () {
    const payments = yield* Payments.Payments
    const repository = yield* PaymentRepository.PaymentRepository

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
      const limit = yield* limited(request, "public", undefined)
      if (Option.isSome(limit)) return tooMany(nonce, limit.value)
      const params = yield* HttpRouter.params
      const id = Schema.decodeUnknownOption(Ids.PaymentId)(params["paymentId"])
      if (Option.isNone(id)) return notFoundPayment(nonce)
      const view = yield* Effect.either(payments.getPublic(id.value))
      if (Either.isLeft(view)) return notFoundPayment(nonce)
      const payment = yield* repository.findById(id.value)
      const now = yield* DateTime.now
      const status = view.right.payment_status
      const shown: Payment.PaymentStatus =
        status === "PENDING" && !DateTime.lessThan(now, view.right.expiration_timestamp) ? "EXPIRED" : status
      return Layout.respond(
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
          nonce
        }),
        { status: 200 }
      )
    })

    return { page, notFound: Effect.map(newNonce, notFoundPayment) }
  })
