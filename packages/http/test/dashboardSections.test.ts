/**
 * The dashboard's customers, payouts, webhooks and sandbox sections and the partner's list, called
 * as the dashboard's router calls them (a `Ctx` with the principal the session acts as), over the
 * in-memory sandbox engine: each principal reads and changes only its own merchant's things, a
 * partner only a merchant that consented, and what a section shows comes from the core services.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Ids, Principal, WebhookDeliveries } from "@cobro/core"
import { TestClocks } from "@cobro/bank-sandbox"
import { Duration, Effect, Layer } from "effect"
import { defaultRateLimits, HttpConfig } from "../src/HttpConfig.js"
import * as RateLimitStore from "../src/RateLimitStore.js"
import * as Customers from "../src/internal/dashboard/customers.js"
import * as Merchants from "../src/internal/dashboard/merchants.js"
import * as Payouts from "../src/internal/dashboard/payouts.js"
import * as Sandbox from "../src/internal/dashboard/sandbox.js"
import type { Ctx, Outcome } from "../src/internal/dashboard/sections.js"
import * as Webhooks from "../src/internal/dashboard/webhooks.js"
import * as RateLimit from "../src/internal/rateLimit.js"
import { seed, type Owned } from "./dashboardSupport.js"
import { serverLayer } from "./support.js"

// Fresh: the API's own (built with rate limits off) is the same layer, memoized otherwise.
const limits = Layer.fresh(RateLimit.layerLimits).pipe(
  Layer.provide(RateLimitStore.layerMemory),
  Layer.provide(
    HttpConfig.layer({
      rateLimits: { ...defaultRateLimits, replaysPerUser: { limit: 3, window: Duration.hours(1) } }
    })
  )
)

const ctx = (
  principal: Principal.Principal,
  path: {
    query?: Record<string, string>
    params?: Record<string, string>
    form?: Record<string, string>
  } = {}
): Ctx => ({
  principal,
  base: "/dashboard",
  query: new URLSearchParams(path.query ?? {}),
  params: path.params ?? {},
  csrf: "token",
  form: (name) => path.form?.[name],
  sandbox: true
})

const bodyOf = (outcome: Outcome): string => {
  if (outcome._tag !== "Page") throw new Error(`a redirect to ${outcome.location}, not a page`)
  return outcome.body.value.replace(/\u00a0/g, " ")
}

const statusOf = (outcome: Outcome) => (outcome._tag === "Page" ? outcome.status : 303)

const secretsOf = (other: Owned) => [
  other.user_id,
  other.payment_id,
  other.customer_id,
  other.customer_name,
  other.customer_cvu,
  other.event_id
]

const user = (owned: Owned) => Principal.Principal.User({ user_id: Ids.UserId.make(owned.user_id) })

describe("dashboard sections", () => {
  layer(limits.pipe(Layer.provideMerge(serverLayer({ rateLimits: false }))), {
    timeout: Duration.seconds(60)
  })((it) => {
    it.effect("each principal sees and changes only its own merchant's, a partner only with a consent", () =>
      Effect.gen(function* () {
        const world = yield* seed
        const customers = yield* Customers.make
        const payouts = yield* Payouts.make
        const webhooks = yield* Webhooks.make
        const sandbox = yield* Sandbox.make
        const merchants = yield* Merchants.make
        const partnerId = Ids.PartnerId.make(world.partner.partner_id)
        const asPartner = yield* merchants.actFor(partnerId, Ids.UserId.make(world.one.user_id))
        expect(asPartner).toEqual(
          Principal.Principal.Partner({ user_id: Ids.UserId.make(world.one.user_id), partner_id: partnerId })
        )

        const views: ReadonlyArray<readonly [string, Principal.Principal, Owned, Owned]> = [
          ["merchant one", user(world.one), world.one, world.two],
          ["merchant two", user(world.two), world.two, world.one],
          ["the partner for one", asPartner, world.one, world.two]
        ]
        for (const [who, principal, mine, other] of views) {
          const pages = [
            [customers.list(ctx(principal)), [mine.customer_name, mine.customer_cvu]],
            [
              customers.detail(ctx(principal, { params: { customerId: mine.customer_id } })),
              [mine.customer_cvu, "$ 700,00"]
            ],
            [payouts.list(ctx(principal)), [mine.payment_id, "$ 100,00", "Devoluciones"]],
            [payouts.list(ctx(principal, { query: { tipo: "refund" } })), [mine.payment_id]],
            [webhooks.list(ctx(principal)), [mine.event_id]],
            [
              webhooks.detail(ctx(principal, { params: { eventId: mine.event_id } })),
              [mine.event_id, "Reenviar webhook"]
            ],
            [sandbox.show(ctx(principal)), ["Reloj de pruebas", "CVU a pagar"]]
          ] as const
          for (const [run, shown] of pages) {
            const outcome = yield* run
            expect(statusOf(outcome), who).toBe(200)
            const body = bodyOf(outcome)
            for (const text of shown) expect(body, `${who} sees ${text}`).toContain(text)
            for (const secret of secretsOf(other))
              expect(body, `${who} never sees ${secret}`).not.toContain(secret)
          }
          // The other's things are not found, and changing them is refused without a trace.
          const refusals = [
            customers.detail(ctx(principal, { params: { customerId: other.customer_id } })),
            webhooks.detail(ctx(principal, { params: { eventId: other.event_id } })),
            webhooks.resend(ctx(principal, { params: { eventId: other.event_id } })),
            sandbox.pay(ctx(principal, { form: { cvu: other.customer_cvu, monto: "10" } }))
          ]
          for (const run of refusals) {
            const outcome = yield* run
            expect(statusOf(outcome), who).toBe(404)
            for (const secret of secretsOf(other)) expect(bodyOf(outcome)).not.toContain(secret)
          }
        }
        const deliveries = yield* WebhookDeliveries.WebhookDeliveries
        const untouched = yield* deliveries.get(user(world.two), Ids.EventId.make(world.two.event_id))
        expect(untouched.delivery.replays).toBe(0)

        // A resend replays the event through the same service as the API, and is counted.
        const resent = yield* webhooks.resend(
          ctx(user(world.one), { params: { eventId: world.one.event_id } })
        )
        expect(resent).toEqual({
          _tag: "Redirect",
          location: `/dashboard/webhooks/${encodeURIComponent(world.one.event_id)}?reenviado=1`
        })
        const replayed = yield* deliveries.get(user(world.one), Ids.EventId.make(world.one.event_id))
        expect(replayed.delivery.replays).toBe(1)
        // The limit of the API's replays (3 an hour here) holds in the dashboard too.
        yield* webhooks.resend(ctx(asPartner, { params: { eventId: world.one.event_id } }))
        yield* webhooks.resend(ctx(user(world.one), { params: { eventId: world.one.event_id } }))
        const limited = yield* webhooks.resend(
          ctx(user(world.one), { params: { eventId: world.one.event_id } })
        )
        expect(statusOf(limited)).toBe(200)
        expect(bodyOf(limited)).toContain("Reenviaste demasiados webhooks")
        expect(
          (yield* deliveries.get(user(world.one), Ids.EventId.make(world.one.event_id))).delivery.replays
        ).toBe(3)

        // The test clock moves for the merchant acting, not for the other.
        const clocks = yield* TestClocks.TestClocks
        const moved = yield* sandbox.advance(
          ctx(user(world.two), { form: { cantidad: "3", unidad: "dias" } })
        )
        expect(moved).toEqual({ _tag: "Redirect", location: "/dashboard/sandbox?hecho=reloj" })
        expect(
          Duration.toHours((yield* clocks.read(Ids.UserId.make(world.two.user_id))).offset)
        ).toBeGreaterThanOrEqual(72)
        expect(Duration.toMillis((yield* clocks.read(Ids.UserId.make(world.one.user_id))).offset)).toBe(0)
        const backwards = yield* sandbox.advance(
          ctx(user(world.two), { form: { cantidad: "0", unidad: "horas" } })
        )
        expect(statusOf(backwards)).toBe(400)
        const tooFar = yield* sandbox.advance(
          ctx(user(world.two), { form: { cantidad: "401", unidad: "dias" } })
        )
        expect(bodyOf(tooFar)).toContain("400 días")

        // The faucet pays the merchant's own CVU.
        const paid = yield* sandbox.pay(
          ctx(asPartner, { form: { cvu: world.one.customer_cvu, monto: "50,25" } })
        )
        expect(paid).toEqual({ _tag: "Redirect", location: "/dashboard/sandbox?hecho=acreditada" })
        const detail = bodyOf(
          yield* customers.detail(ctx(user(world.one), { params: { customerId: world.one.customer_id } }))
        )
        expect(detail).toContain("$ 50,25")
        const badAmount = yield* sandbox.pay(
          ctx(user(world.one), { form: { cvu: world.one.customer_cvu, monto: "-3" } })
        )
        expect(statusOf(badAmount)).toBe(400)

        // The partner's list: the merchant that consented, not the other.
        const list = bodyOf(yield* merchants.list(partnerId, "/dashboard", "token"))
        expect(list).toContain(world.one.user_id)
        expect(list).not.toContain(world.two.user_id)
        const refused = yield* Effect.flip(merchants.actFor(partnerId, Ids.UserId.make(world.two.user_id)))
        expect(refused._tag).toBe("NotFound")
      })
    )
  })
})
