/**
 * The dashboard walked by two merchants and a partner, page by page (and export by export): each
 * sees its own and only its own; another's payment, customer or webhook delivery is not found
 * and never shown; the partner lists only the merchant that consented, opens only that one, and
 * is not offered what its `PAR-` tokens may not do (the merchant's credentials). Every CSV
 * export holds the principal's own rows only.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { baseUrl, seedForSignIn as seed, type Owned, Visitor } from "./dashboardSupport.js"
import { dashboardServerLayer } from "./dashboardServer.js"

const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

/** Every page of a merchant's dashboard that shows `mine`'s data, with what it must show. */
const pagesOf = (mine: Owned) =>
  [
    ["/dashboard", [mine.external_id]],
    ["/dashboard/payments", [mine.external_id]],
    [`/dashboard/payments/${encodeURIComponent(mine.payment_id)}`, [mine.external_id, mine.event_id]],
    ["/dashboard/customers", [mine.customer_name, mine.customer_cvu]],
    [`/dashboard/customers/${encodeURIComponent(mine.customer_id)}`, [mine.customer_name, mine.customer_cvu]],
    ["/dashboard/payouts", [mine.payment_id]],
    ["/dashboard/webhooks", [mine.event_id]],
    [`/dashboard/webhooks/${encodeURIComponent(mine.event_id)}`, [mine.event_id]],
    ["/dashboard/sandbox", ["Reloj de pruebas"]]
  ] as const

/** The other's things, none of which may appear on `mine`'s pages. */
const secretsOf = (other: Owned) => [
  other.user_id,
  other.external_id,
  other.payment_id,
  other.customer_id,
  other.customer_name,
  other.customer_cvu,
  other.event_id
]

/** The other's detail pages and exports, each of which must be not found. */
const detailsOf = (other: Owned) => [
  `/dashboard/payments/${encodeURIComponent(other.payment_id)}`,
  `/dashboard/customers/${encodeURIComponent(other.customer_id)}`,
  `/dashboard/webhooks/${encodeURIComponent(other.event_id)}`
]

const walk = (visitor: Visitor, mine: Owned, other: Owned) =>
  Effect.gen(function* () {
    for (const [path, shown] of pagesOf(mine)) {
      const answer = yield* promise(() => visitor.get(path))
      expect(answer.status, path).toBe(200)
      for (const text of shown) expect(answer.text, `${path} shows ${text}`).toContain(text)
      for (const secret of secretsOf(other))
        expect(answer.text, `${path} hides ${secret}`).not.toContain(secret)
    }
    for (const path of detailsOf(other)) {
      const answer = yield* promise(() => visitor.get(path))
      expect(answer.status, path).toBe(404)
      for (const secret of secretsOf(other))
        expect(answer.text, `${path} hides ${secret}`).not.toContain(secret)
    }
    // Export by export: CSV of its own, nothing of the other's; the other's customer not found.
    const exports = [
      ["/dashboard/payments/export.csv", [mine.external_id]],
      [`/dashboard/payments/export.csv?q=${encodeURIComponent(mine.external_id)}`, [mine.external_id]],
      [
        `/dashboard/customers/${encodeURIComponent(mine.customer_id)}/transactions/export.csv`,
        [mine.customer_cvu]
      ],
      ["/dashboard/payouts/export.csv", [mine.payment_id]],
      ["/dashboard/payouts/export.csv?tipo=refund", [mine.payment_id]],
      ["/dashboard/payouts/refunds.csv", [mine.payment_id]]
    ] as const
    for (const [path, shown] of exports) {
      const answer = yield* promise(() => visitor.get(path))
      expect(answer.status, path).toBe(200)
      expect(answer.contentType, path).toMatch(/^text\/csv/)
      for (const text of shown) expect(answer.text, `${path} holds ${text}`).toContain(text)
      for (const secret of secretsOf(other))
        expect(answer.text, `${path} lacks ${secret}`).not.toContain(secret)
    }
    const othersCustomer = yield* promise(() =>
      visitor.get(`/dashboard/customers/${encodeURIComponent(other.customer_id)}/transactions/export.csv`)
    )
    expect(othersCustomer.status).toBe(404)
    expect(othersCustomer.contentType).toMatch(/^text\/html/)
    // The text filter of the list holds in its export: another's external id finds nothing.
    const filtered = yield* promise(() =>
      visitor.get(`/dashboard/payments/export.csv?q=${encodeURIComponent(other.external_id)}`)
    )
    expect(filtered.text.trim().split("\r\n")).toHaveLength(1)

    // Another's event cannot be resent: not found, and nothing replayed.
    const resend = yield* promise(() =>
      visitor.post(`/dashboard/webhooks/${encodeURIComponent(other.event_id)}/resend`, {})
    )
    expect(resend.status).toBe(404)
    // Nor can another's CVU be paid from the sandbox page.
    const pay = yield* promise(() =>
      visitor.post("/dashboard/sandbox/faucet", { cvu: other.customer_cvu, monto: "10" })
    )
    expect(pay.status).toBe(404)
    expect(pay.text).toContain("Ese CVU no es de tu cuenta")
  })

describe("the dashboard, walked by two merchants and a partner", () => {
  layer(dashboardServerLayer(), { timeout: Duration.seconds(60) })((it) => {
    it.effect("each sees only what it may, page by page", () =>
      Effect.gen(function* () {
        const world = yield* seed
        const base = yield* baseUrl

        const one = new Visitor(base)
        yield* promise(() => one.signIn("merchant", world.one.email))
        yield* walk(one, world.one, world.two)

        const two = new Visitor(base)
        yield* promise(() => two.signIn("merchant", world.two.email))
        yield* walk(two, world.two, world.one)

        // The partner: its list names the merchant that consented, not the other.
        const partner = new Visitor(base)
        yield* promise(() => partner.signIn("partner", world.partner.client_id))
        const list = yield* promise(() => partner.get("/dashboard/partner"))
        expect(list.status).toBe(200)
        expect(list.text).toContain(world.one.user_id)
        expect(list.text).not.toContain(world.two.user_id)
        // Before opening a merchant, a merchant page sends the partner to its list.
        const early = yield* promise(() => partner.get("/dashboard/customers"))
        expect(early.status).toBe(303)
        expect(early.location).toBe("/dashboard/partner")
        const earlyExport = yield* promise(() => partner.get("/dashboard/payments/export.csv"))
        expect(earlyExport.status).toBe(303)
        // The merchant that did not consent cannot be opened.
        const refused = yield* promise(() =>
          partner.post("/dashboard/partner/open", { user_id: world.two.user_id })
        )
        expect(refused.status).toBe(404)
        expect(refused.text).not.toContain(world.two.external_id)
        const opened = yield* promise(() =>
          partner.post("/dashboard/partner/open", { user_id: world.one.user_id })
        )
        expect(opened.status).toBe(303)
        yield* walk(partner, world.one, world.two)
        // What no PAR- token may do: the merchant's credentials.
        const developers = yield* promise(() => partner.get("/dashboard/developers"))
        expect(developers.status).toBe(404)
        expect(developers.text).not.toContain("cs_")
        // Back to its list: merchant pages send it there again.
        yield* promise(() => partner.post("/dashboard/partner/close", {}))
        const closed = yield* promise(() => partner.get("/dashboard/payouts"))
        expect(closed.status).toBe(303)
        // A merchant never reaches the partner's pages.
        const intruder = yield* promise(() => one.get("/dashboard/partner"))
        expect(intruder.status).not.toBe(200)
      })
    )
  })
})
