/**
 * cobro for the example: the whole API and the hosted pages (`/authorize`, `/pay/{id}`) on a
 * node:http server over the in-memory sandbox engine, as `examples/http-host` mounts it.
 *
 * Two steps of the flow happen outside the API, so they call the engine directly:
 *
 * - registering a partner, which SPEC leaves to support (the partner gives its name and redirect
 *   URL and receives `partner_id`, `client_id` and `client_secret`; the CLI does it in production);
 * - activating an account, which an operator does after identity verification (a merchant
 *   onboarded through a partner starts PENDING and cannot take payments until then).
 */
import { Accounts, Auth, Ids } from "@cobro/core"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { NodeHttp } from "@cobro/http/node"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as Http from "node:http"
import { close, listen } from "./loopback.js"

export interface PartnerRegistration {
  readonly name: string
  /** Where cobro sends the merchant back with `code` and `state`. */
  readonly redirect_url: string
  /** Where cobro sends the partner's events ("Account activated"). */
  readonly webhook_url?: string
}

/** What support hands the partner; the secret is shown this once. */
export interface PartnerCredentials {
  readonly partner_id: string
  readonly client_id: string
  readonly client_secret: string
}

export interface Cobro {
  /** `http://127.0.0.1:<port>`: the API, `/authorize` and `/docs`. */
  readonly url: string
  readonly registerPartner: (registration: PartnerRegistration) => Promise<PartnerCredentials>
  /** An operator's approval after identity verification: PENDING to ACTIVE. */
  readonly activate: (userId: string) => Promise<void>
  readonly close: () => Promise<void>
}

/** Starts cobro on `port` (0: any free port). */
export const startCobro = async (port: number): Promise<Cobro> => {
  // The address is needed before the engine is made: it is the base of every `payment_url`.
  const server = Http.createServer()
  const url = await listen(server, port)
  const engine = ManagedRuntime.make(SandboxEngine.layerMemory({ paymentPageBaseUrl: url }))
  const api = await NodeHttp.toNodeListener(Layer.succeedContext((await engine.runtime()).context))
  server.on("request", api.listener)

  const registerPartner = (registration: PartnerRegistration) =>
    engine.runPromise(
      Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const request = yield* Auth.decodeRegisterPartnerRequest(registration)
        const registered = yield* auth.registerPartner(request)
        return {
          partner_id: registered.partner.partner_id,
          client_id: registered.client_id,
          client_secret: registered.client_secret
        } satisfies PartnerCredentials
      })
    )

  const activate = (userId: string) =>
    engine.runPromise(
      Effect.asVoid(
        Effect.flatMap(Accounts.Accounts, (accounts) => accounts.setStatus(Ids.UserId.make(userId), "ACTIVE"))
      )
    )

  return {
    url,
    registerPartner,
    activate,
    close: async () => {
      await close(server)
      await api.dispose()
      await engine.dispose()
    }
  }
}
