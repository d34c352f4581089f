/**
 * The bank's notifications in: with `COBRO_BANK=bind`, BIND's "Aviso de transferencia entrante"
 * route (`BindIngress.path`, `/bank/bind/notifications`) beside the API on the same router (the
 * API's edge applies: body limits, 404 for unknown routes). Its settings are
 * `COBRO_BIND_WEBHOOK_SECRET`, `COBRO_BIND_WEBHOOK_SECRET_HEADER` and `COBRO_BIND_WEBHOOK_ALLOW`;
 * the source address is the client's as the API sees it (`COBRO_TRUST_PROXY`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { BindConfig, BindIngress } from "@cobro/bank-bind"
import type { Transfers } from "@cobro/core"
import { Effect, Option } from "effect"
import type { ServerConfig } from "./ServerConfig.js"

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
          const context = yield* Effect.context<Transfers.Transfers>()
          if (Option.isNone(settings.webhookSecret))
            yield* Effect.logWarning(
              `COBRO_BIND_WEBHOOK_SECRET is not set: every notification to ${BindIngress.path} is refused (401); transfers in are found by reconciliation only`
            )
          if (config.mode === "production" && settings.allow.length === 0)
            yield* Effect.logWarning(
              "COBRO_BIND_WEBHOOK_ALLOW is empty: notifications are accepted from any address that has the secret"
            )
          yield* router.post(
            BindIngress.path,
            Effect.provide(BindIngress.handler(settings, clientAddress), context)
          )
        })
  )
