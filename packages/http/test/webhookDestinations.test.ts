/**
 * Webhook URLs at creation (issue 21, item 4). In production (`webhookDestinations:
 * "production"`) every resource that takes a webhook URL — payments, fixed customers, split
 * payments, partners — refuses with 400 `request.invalid` naming `webhook_url` a URL the
 * transport would never contact: any scheme but https, `localhost`, and a non-public IP literal
 * in any notation. The sandbox keeps accepting loopback receivers.
 */
import { expect, layer } from "@effect/vitest"
import { Auth, Outbox } from "@cobro/core"
import { Effect, Schema } from "effect"
import { call, merchant, serverLayer, tokenFor } from "./support.js"

/** What production refuses, and the words of `data.detail` that say why. */
const refusedInProduction: ReadonlyArray<readonly [string, string]> = [
  // The list: plain http, whatever the host.
  ["http://127.0.0.1:9/x", "must use https"],
  ["http://169.254.169.254/latest", "must use https"],
  ["http://[::ffff:127.0.0.1]/x", "must use https"],
  ["http://10.0.0.1/x", "must use https"],
  ["http://localhost/x", "must use https"],
  ["http://2130706433/x", "must use https"],
  ["http://0x7f.1/x", "must use https"],
  ["http://hooks.example.com/cobro", "must use https"],
  // The same hosts over https, judged by what they are.
  ["https://127.0.0.1:9/x", "127.0.0.1 is a loopback address"],
  ["https://169.254.169.254/latest", "169.254.169.254 is a link-local address"],
  ["https://10.0.0.1/x", "10.0.0.1 is a private address"],
  ["https://172.16.5.4/x", "172.16.5.4 is a private address"],
  ["https://192.168.0.1/x", "192.168.0.1 is a private address"],
  ["https://100.64.0.1/x", "carrier-grade NAT"],
  ["https://0/x", "0.0.0.0 is an unspecified address"],
  ["https://224.0.0.1/x", "multicast"],
  ["https://192.0.2.10/x", "reserved"],
  ["https://localhost/x", "localhost is a loopback name"],
  ["https://LOCALHOST.:8443/x", "localhost is a loopback name"],
  ["https://hooks.localhost/x", "hooks.localhost is a loopback name"],
  // Other notations of 127.0.0.1 (decimal, hex, octal, short), which the URL parser normalizes.
  ["https://2130706433/x", "127.0.0.1 is a loopback address"],
  ["https://0x7f.1/x", "127.0.0.1 is a loopback address"],
  ["https://0x7f000001/x", "127.0.0.1 is a loopback address"],
  ["https://0177.0.0.1/x", "127.0.0.1 is a loopback address"],
  ["https://127.1/x", "127.0.0.1 is a loopback address"],
  // IPv6: loopback, link-local, unique local, and forms carrying an IPv4 address.
  ["https://[::1]/x", "::1 is a loopback address"],
  ["https://[0:0:0:0:0:0:0:1]/x", "::1 is a loopback address"],
  ["https://[::]/x", ":: is an unspecified address"],
  ["https://[fe80::1]/x", "fe80::1 is a link-local address"],
  ["https://[fd12:3456::1]/x", "fd12:3456::1 is a private address"],
  ["https://[::ffff:127.0.0.1]/x", "::ffff:7f00:1 is a loopback address"],
  ["https://[::ffff:a9fe:a9fe]/x", "::ffff:a9fe:a9fe is a link-local address"],
  ["https://[64:ff9b::a00:1]/x", "64:ff9b::a00:1 is a private address"],
  ["https://[2002:7f00:1::]/x", "2002:7f00:1:: is a loopback address"],
  ["https://[2001:db8::1]/x", "reserved"],
  // Never sent by the transport, in any mode.
  ["https://user:secret@hooks.example.com/x", "credentials in the URL are not allowed"]
]

/** Accepted in production: https to a public name or address. */
const acceptedInProduction = [
  "https://hooks.example.com/cobro",
  "https://hooks.example.com.:8443/cobro?shop=1",
  "https://93.184.216.34/cobro",
  "https://[2606:4700:4700::1111]/cobro"
]

const expectRefused = (r: { readonly status: number; readonly body: unknown }, url: string, why: string) => {
  expect({ url, status: r.status, body: r.body }).toEqual({
    url,
    status: 400,
    body: {
      message: "request.invalid",
      error: true,
      code: 400,
      data: { field: "webhook_url", detail: expect.stringContaining(why) }
    }
  })
}

/** An ACTIVE merchant with an alias prefix (for fixed customers) and a user token. */
const withToken = (user_id: string, alias_prefix: string) =>
  Effect.gen(function* () {
    const m = yield* merchant(user_id, { alias_prefix })
    return yield* tokenFor(user_id, m.client_id, m.client_secret)
  })

const payment = (user_id: string, external_id: string, webhook_url: string) =>
  call("POST", "/payments/", {
    body: {
      user_id,
      external_id,
      price: { amount: 1500, currency: "ARS" },
      payment_options: ["transfer"],
      webhook_url
    }
  })

const customer = (token: string, user_id: string, n: number, webhook_url: string) =>
  call("POST", "/customers/", {
    token,
    body: { user_id, alias: `c${n}`, customer_id: `cus-${n}`, name: `Cliente ${n}`, webhook_url }
  })

const split = (token: string, external_id: string, webhook_url: string) =>
  call("POST", "/split/payments", { token, body: { external_id, webhook_url } })

const partner = (name: string, webhook_url: string) =>
  Effect.flatMap(Auth.Auth, (auth) =>
    auth.registerPartner(
      Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
        name,
        redirect_url: "https://partner.example.com/callback",
        webhook_url
      })
    )
  )

const eventsWithUrls = Effect.map(
  Effect.flatMap(Outbox.Outbox, (o) => o.list(0, 100_000)),
  (page) => page.map((e) => e.event.webhook_url).filter((u) => u !== null)
)

layer(serverLayer({}, { webhookDestinations: "production" }))(
  "production: webhook URLs at creation",
  (it) => {
    it.effect(
      "POST /payments/ refuses every URL the transport would never contact; https to a public host passes",
      () =>
        Effect.gen(function* () {
          yield* merchant("wd_pay")
          let n = 0
          for (const [url, why] of refusedInProduction)
            expectRefused(yield* payment("wd_pay", `o-${n++}`, url), url, why)
          for (const url of acceptedInProduction) {
            const r = yield* payment("wd_pay", `o-${n++}`, url)
            expect({ url, status: r.status }).toEqual({ url, status: 200 })
          }
        })
    )

    it.effect("POST /customers/ refuses them too", () =>
      Effect.gen(function* () {
        const token = yield* withToken("wd_cus", "wdcus")
        let n = 0
        for (const [url, why] of refusedInProduction) {
          expectRefused(yield* customer(token, "wd_cus", n++, url), url, why)
        }
        for (const url of acceptedInProduction) {
          const r = yield* customer(token, "wd_cus", n++, url)
          expect({ url, status: r.status }).toEqual({ url, status: 200 })
        }
        // Without a URL (absent or null) a customer is still created.
        expect(
          (yield* call("POST", "/customers/", {
            token,
            body: {
              user_id: "wd_cus",
              alias: "sinurl",
              customer_id: "cus-none",
              name: "Sin URL",
              webhook_url: null
            }
          })).status
        ).toBe(200)
      })
    )

    it.effect("POST /split/payments refuses them too", () =>
      Effect.gen(function* () {
        const token = yield* withToken("wd_spl", "wdspl")
        let n = 0
        for (const [url, why] of refusedInProduction)
          expectRefused(yield* split(token, `s-${n++}`, url), url, why)
        for (const url of acceptedInProduction) {
          const r = yield* split(token, `s-${n++}`, url)
          expect({ url, status: r.status }).toEqual({ url, status: 200 })
        }
      })
    )

    it.effect(
      "partners (registered with support) are refused them too, as request.invalid on webhook_url",
      () =>
        Effect.gen(function* () {
          for (const [url, why] of refusedInProduction) {
            const error = yield* Effect.flip(partner("Socio", url))
            expect({ url, error }).toMatchObject({
              url,
              error: { _tag: "InvalidInput", key: "request.invalid", field: "webhook_url" }
            })
            expect(error.message).toContain(why)
          }
          const registered = yield* partner("Socio Bueno", "https://partner.example.com/hooks")
          expect(registered.partner.webhook_url).toBe("https://partner.example.com/hooks")
        })
    )

    it.effect("a refused URL writes nothing: no payment, no customer, no split, no event", () =>
      Effect.gen(function* () {
        const token = yield* withToken("wd_none", "wdnone")
        const before = (yield* eventsWithUrls).length
        expect((yield* payment("wd_none", "refused", "https://10.0.0.1/x")).status).toBe(400)
        expect((yield* call("GET", "/payments/VAR-wd_none-refused/public")).status).toBe(404)
        expect((yield* customer(token, "wd_none", 1, "https://10.0.0.1/x")).status).toBe(400)
        expect((yield* call("GET", "/customers/?user_id=wd_none", { token })).body).toMatchObject({
          data: { customers: [] }
        })
        expect((yield* split(token, "refused", "https://10.0.0.1/x")).status).toBe(400)
        expect((yield* eventsWithUrls).length).toBe(before)
      })
    )
  }
)

layer(serverLayer())("sandbox: webhook URLs at creation", (it) => {
  it.effect("loopback and private receivers over http are accepted, on every resource", () =>
    Effect.gen(function* () {
      const token = yield* withToken("wd_sbx", "wdsbx")
      const urls = [
        "http://127.0.0.1:9/x",
        "http://localhost:3000/hooks",
        "http://[::1]:8080/x",
        "http://10.0.0.1/x"
      ]
      let n = 0
      for (const url of urls) {
        const made = [
          yield* payment("wd_sbx", `o-${n}`, url),
          yield* customer(token, "wd_sbx", n, url),
          yield* split(token, `s-${n}`, url)
        ]
        expect({ url, statuses: made.map((r) => r.status) }).toEqual({ url, statuses: [200, 200, 200] })
        n++
      }
      const registered = yield* partner("Socio Local", "http://localhost:4000/hooks")
      expect(registered.partner.webhook_url).toBe("http://localhost:4000/hooks")
    })
  )

  it.effect("a URL with credentials is refused in sandbox too: the transport never sends them", () =>
    Effect.gen(function* () {
      yield* merchant("wd_cred")
      const url = "http://user:secret@127.0.0.1:9/x"
      expectRefused(yield* payment("wd_cred", "o-1", url), url, "credentials in the URL are not allowed")
    })
  )
})
