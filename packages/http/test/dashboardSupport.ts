/**
 * What the dashboard's tests share: a seeded world (two merchants, each with a payment paid and
 * partly refunded, a customer, a webhook delivery; a partner that one of them consented to), a
 * cookie-keeping client that signs in and submits forms as a browser would (the CSRF token from
 * its cookie), and the list of every dashboard page a merchant or a partner opens.
 */
import { HttpServer } from "@effect/platform"
import {
  type Accounts,
  type Auth,
  Credential,
  type Errors,
  Crypto,
  Customer,
  Customers,
  Ids,
  Onboarding,
  PaymentRequest,
  Payments,
  Principal,
  Refund,
  Refunds,
  WebhookDeliveries,
  WebSessions
} from "@cobro/core"
import { CredentialRepository } from "@cobro/core/ports"
import { Faucet } from "@cobro/bank-sandbox"
import { Effect, Option, Schema } from "effect"
import { merchant, partner } from "./support.js"

export const PASSWORD = "contraseña de prueba 1"

/** The test server's address, as a browser or `fetch` reaches it. */
export const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : ""
)

/** What one merchant of the seeded world owns. */
export interface Owned {
  readonly user_id: string
  readonly email: string
  readonly payment_id: string
  readonly external_id: string
  readonly customer_id: string
  readonly customer_name: string
  readonly customer_cvu: string
  readonly event_id: string
}

export interface World {
  readonly one: Owned
  readonly two: Owned
  readonly partner: { readonly partner_id: string; readonly client_id: string; readonly name: string }
}

const setPassword = (user_id: string) =>
  Effect.gen(function* () {
    const credentials = yield* CredentialRepository.CredentialRepository
    const crypto = yield* Crypto.Crypto
    const found = Option.getOrThrow(yield* credentials.findCredential(Ids.UserId.make(user_id)))
    yield* credentials.updateCredential(
      new Credential.UserCredential({ ...found, password_hash: yield* crypto.hashPassword(PASSWORD) })
    )
  })

/** A merchant with a password, a paid payment (refunded in part), a customer and a delivery. */
const owned = (user_id: string, name: string, alias_prefix: string) =>
  Effect.gen(function* () {
    const created = yield* merchant(user_id, { alias_prefix })
    yield* setPassword(created.user.user_id)
    const payments = yield* Payments.Payments
    const external_id = `pedido-${user_id}`
    const payment = yield* payments.create(
      Schema.decodeUnknownSync(PaymentRequest.CreatePaymentRequest)({
        user_id,
        external_id,
        price: { amount: 1500, currency: "ARS" },
        payment_options: ["transfer"],
        webhook_url: "https://shop.example.com/hooks"
      })
    )
    const faucet = yield* Faucet.Faucet
    const uid = Ids.UserId.make(user_id)
    yield* faucet.send(uid, payment.cvu, new Faucet.FaucetRequest({ amount: 1500 }))
    yield* (yield* Refunds.Refunds).create(
      uid,
      payment.id,
      new Refund.RefundRequest({ refund_type: "PARTIAL", amount: "100.00" })
    )
    const customers = yield* Customers.Customers
    const customer = yield* customers.create(
      uid,
      Schema.decodeUnknownSync(Customer.CreateCustomerRequest)({
        user_id,
        alias: "cliente",
        customer_id: `cus-${user_id}`,
        name
      })
    )
    yield* faucet.send(uid, customer.bank_info.cvu, new Faucet.FaucetRequest({ amount: 700 }))
    // The payment's event, delivered to its webhook URL (pending: no worker runs here).
    const page = yield* (yield* WebhookDeliveries.WebhookDeliveries).list(
      Principal.Principal.User({ user_id: uid }),
      {}
    )
    const event = page.deliveries.find((d) => d.delivery.type === "payment.updated")
    if (event === undefined) throw new Error(`no payment.updated delivery for ${user_id}`)
    return {
      event_id: event.delivery.event_id,
      user_id,
      email: created.user.email,
      payment_id: payment.id,
      external_id,
      customer_id: customer.customer_id,
      customer_name: name,
      customer_cvu: customer.bank_info.cvu
    }
  })

/** The seeded world: merchants `one` (consented to the partner) and `two` (did not). */
export const seed: Effect.Effect<
  World,
  Errors.DomainError,
  | Accounts.Accounts
  | Auth.Auth
  | Crypto.Crypto
  | CredentialRepository.CredentialRepository
  | Customers.Customers
  | Faucet.Faucet
  | Onboarding.Onboarding
  | Payments.Payments
  | Refunds.Refunds
  | WebhookDeliveries.WebhookDeliveries
> = Effect.gen(function* () {
  const one = yield* owned("tienda_uno", "Cliente De Uno", "uno")
  const two = yield* owned("tienda_dos", "Cliente De Dos", "dos")
  const registered = yield* partner("Socio Integrador")
  const onboarding = yield* Onboarding.Onboarding
  yield* onboarding.consent(
    Ids.UserId.make(one.user_id),
    yield* Onboarding.decodeAuthorizeRequest({ partner_id: registered.partner.partner_id })
  )
  return {
    one,
    two,
    partner: {
      partner_id: registered.partner.partner_id,
      client_id: registered.client_id,
      name: registered.partner.name
    }
  }
})

/** An answer as the client read it. */
export interface Answer {
  readonly status: number
  readonly location: string | null
  readonly contentType: string
  readonly text: string
}

/**
 * A browser without JavaScript: keeps cookies (per name, path ignored: every dashboard cookie is
 * under `/`), follows nothing by itself, posts forms with the CSRF token of its cookie.
 */
export class Visitor {
  private readonly cookies = new Map<string, string>()
  constructor(readonly base: string) {}

  private keep(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";")
      const eq = pair!.indexOf("=")
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      if (value === "" || /max-age=0\b/i.test(line)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  private header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
  }

  async get(path: string): Promise<Answer> {
    const response = await fetch(this.base + path, { redirect: "manual", headers: { cookie: this.header() } })
    this.keep(response)
    return {
      status: response.status,
      location: response.headers.get("location"),
      contentType: response.headers.get("content-type") ?? "",
      text: await response.text()
    }
  }

  async post(path: string, fields: Record<string, string>): Promise<Answer> {
    const body = new URLSearchParams({ csrf_token: this.cookies.get("cobro_csrf") ?? "", ...fields })
    const response = await fetch(this.base + path, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: this.header(), "content-type": "application/x-www-form-urlencoded" },
      body
    })
    this.keep(response)
    return {
      status: response.status,
      location: response.headers.get("location"),
      contentType: response.headers.get("content-type") ?? "",
      text: await response.text()
    }
  }

  /** Opens the sign-in page (for its CSRF cookie) and signs in; fails unless it lands signed in. */
  async signIn(kind: "merchant" | "partner", login: string, password = PASSWORD): Promise<void> {
    const path = kind === "merchant" ? "/dashboard/sign-in" : "/dashboard/sign-in/partner"
    await this.get(path)
    const answer = await this.post(path, {
      ...(kind === "merchant" ? { email: login } : { client_id: login }),
      password
    })
    if (answer.status !== 303)
      throw new Error(`sign-in as ${login}: ${answer.status} ${answer.text.slice(0, 300)}`)
  }
}

/** `seed`, and the partner's dashboard password (`PASSWORD`), for signing in over HTTP. */
export const seedForSignIn: Effect.Effect<
  World,
  Errors.DomainError,
  Effect.Effect.Context<typeof seed> | WebSessions.WebSessions
> = Effect.tap(seed, (world) =>
  Effect.flatMap(WebSessions.WebSessions, (sessions) =>
    sessions.setPartnerPassword(Ids.PartnerId.make(world.partner.partner_id), PASSWORD)
  )
)
