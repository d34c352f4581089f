/**
 * The bank's notifications in: with `COBRO_BANK=bind`, BIND's events route (`BindIngress.path`,
 * `/bank/bind/notifications`) beside the API on the same router (the API's edge applies: body
 * limits, 404 for unknown routes). Every notification is confirmed with BIND's API before anything
 * is credited; its optional layers are `COBRO_BIND_WEBHOOK_CLIENT_CERT` (BIND's mTLS client
 * certificate, verified by cobro's TLS or by a proxy), `COBRO_BIND_WEBHOOK_SECRET` (+ `…_HEADER`)
 * and `COBRO_BIND_WEBHOOK_ALLOW`; the source address is the client's as the API sees it
 * (`COBRO_TRUST_PROXY`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { BindBank, BindConfig, BindIngress } from "@cobro/bank-bind"
import type { OutgoingTransfers, Transfers } from "@cobro/core"
import { Context, Effect, Option } from "effect"
import type { TLSSocket } from "node:tls"
import type { ServerConfig } from "./ServerConfig.js"

/** Whether the request came over TLS with a client certificate the server verified. */
const certified = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const socket = NodeHttpServerRequest.toIncomingMessage(request).socket as Partial<TLSSocket>
  return socket.encrypted === true && socket.authorized === true
}

/** The routes of `config.bank` (none for the sandbox bank: its faucet is the sandbox's). */
export const layer = (
  config: ServerConfig,
  clientAddress: (request: HttpServerRequest.HttpServerRequest) => string
) =>
  HttpApiBuilder.Router.use((router) =>
    config.bank === "sandbox"
      ? Effect.void
      : Effect.gen(function* () {
          const settings = yield* BindConfig.ingressConfig
          // `Services` for `COBRO_BANK=bind` holds BIND's own calls beside its `BankProvider`.
          const bind = yield* Effect.serviceOption(BindBank.BindBank)
          if (Option.isNone(bind)) return yield* Effect.dieMessage("COBRO_BANK=bind without BIND's services")
          const context = Context.add(
            yield* Effect.context<Transfers.Transfers | OutgoingTransfers.OutgoingTransfers>(),
            BindBank.BindBank,
            bind.value
          )
          if (
            config.mode === "production" &&
            Option.isNone(settings.clientCertificate) &&
            Option.isNone(settings.webhookSecret)
          )
            yield* Effect.logWarning(
              `${BindIngress.path}: neither BIND's client certificate (COBRO_BIND_WEBHOOK_CLIENT_CERT) nor a shared secret (COBRO_BIND_WEBHOOK_SECRET) is required; every notification is still confirmed with BIND's API before crediting`
            )
          yield* router.post(
            BindIngress.path,
            Effect.provide(BindIngress.handler(settings, { address: clientAddress, certified }), context)
          )
        })
  )
