/**
 * Payout schedules over HTTP: POST/GET /transactions/schedules and GET/PATCH
 * /transactions/schedules/{schedule_id}, all in the `{status, error, data}` envelope. Each
 * `layer` block has its own server and engine.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import {
  bankHolder,
  call,
  type Json,
  merchant,
  merchantCuit,
  partner,
  partnerTokenFor,
  serverLayer,
  tokenFor
} from "./support.js"

const statusError = (message: string, data: Record<string, unknown> = {}) => ({
  status: "error",
  error: true,
  message,
  data: { detail: expect.any(String), ...data }
})

/** Friday 20 November 2026, 12:00 UTC (09:00 in Buenos Aires). */
const noon = Date.UTC(2026, 10, 20, 12, 0, 0)

/** A merchant, two partners with tokens for it, its user token and an account it holds. */
const setup = (user_id: string) =>
  Effect.gen(function* () {
    const m = yield* merchant(user_id)
    const p1 = yield* partner(`Socio ${user_id} A`)
    const p2 = yield* partner(`Socio ${user_id} B`)
    return {
      partner1: yield* partnerTokenFor(p1, user_id),
      partner2: yield* partnerTokenFor(p2, user_id),
      user: yield* tokenFor(user_id, m.client_id, m.client_secret),
      own: yield* bankHolder(`Tienda ${user_id}`, merchantCuit)
    }
  })

const createSchedule = (token: string, address: string, frequency = "daily") =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/transactions/schedules", {
      token,
      body: { schedule_type: "payout", frequency, payload: { address } }
    })
    expect(r.status).toBe(200)
    return (r.body as Json).data as { schedule_id: string; [k: string]: Json }
  })

layer(serverLayer())("POST /transactions/schedules", (it) => {
  it.effect("a partner creates an active schedule; the account shows it as its payout_schedule", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(noon)
      const s = yield* setup("sch_c1")
      const r = yield* call("POST", "/transactions/schedules", {
        token: s.partner1,
        body: { schedule_type: "payout", frequency: "daily", payload: { address: s.own } }
      })
      expect(r.status).toBe(200)
      const body: Json = r.body
      expect(Object.keys(body).sort()).toEqual(["data", "error", "status"])
      expect(body).toMatchObject({ status: "success", error: false })
      expect(body.data).toEqual({
        schedule_id: expect.any(String),
        schedule_type: "payout",
        frequency: "daily",
        schedule_status: "active",
        // The next Buenos Aires midnight (UTC−3) after now.
        next_run_date: "2026-11-21T03:00:00.000Z",
        creation_timestamp: "2026-11-20T12:00:00.000Z",
        user_id: "sch_c1",
        payload: { address: s.own }
      })
      const account = yield* call("GET", "/users/sch_c1/account", { token: s.partner1 })
      expect((account.body as Json).data.payout_schedule).toEqual({ address: s.own, frequency: "daily" })
    })
  )

  it.effect("a user token is 403 schedule.partner.required in the status envelope", () =>
    Effect.gen(function* () {
      const s = yield* setup("sch_c2")
      const r = yield* call("POST", "/transactions/schedules", {
        token: s.user,
        body: { schedule_type: "payout", frequency: "weekly", payload: { address: s.own } }
      })
      expect(r.status).toBe(403)
      expect(r.body).toEqual(statusError("schedule.partner.required"))
    })
  )

  it.effect("an address of someone else is 400 holder.mismatch; an unknown one 400 address.not.found", () =>
    Effect.gen(function* () {
      const s = yield* setup("sch_c3")
      const stranger = yield* bankHolder("Otra Persona")
      const mismatch = yield* call("POST", "/transactions/schedules", {
        token: s.partner1,
        body: { schedule_type: "payout", frequency: "daily", payload: { address: stranger } }
      })
      expect(mismatch.status).toBe(400)
      expect(mismatch.body).toEqual(
        statusError("schedule.address.holder.mismatch", { field: "payload.address" })
      )
      const unknown = yield* call("POST", "/transactions/schedules", {
        token: s.partner1,
        body: { schedule_type: "payout", frequency: "daily", payload: { address: "alias.que.no.existe" } }
      })
      expect(unknown.status).toBe(400)
      expect(unknown.body).toEqual(statusError("schedule.address.not.found", { field: "payload.address" }))
    })
  )

  it.effect("a bad frequency, type or address is 400 request.invalid naming the field", () =>
    Effect.gen(function* () {
      const s = yield* setup("sch_c4")
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ schedule_type: "payout", frequency: "hourly", payload: { address: s.own } }, "frequency"],
        [{ schedule_type: "refund", frequency: "daily", payload: { address: s.own } }, "schedule_type"],
        [{ schedule_type: "payout", frequency: "daily", payload: { address: "12" } }, "payload.address"],
        [{ schedule_type: "payout", frequency: "daily" }, "payload"]
      ]
      for (const [body, field] of cases) {
        const r = yield* call("POST", "/transactions/schedules", { token: s.partner1, body })
        expect(r.status).toBe(400)
        expect(r.body).toEqual(statusError("request.invalid", { field }))
      }
    })
  )
})

layer(serverLayer())("GET /transactions/schedules", (it) => {
  it.effect("a partner lists only the schedules it created; the user's own token lists them all", () =>
    Effect.gen(function* () {
      const s = yield* setup("sch_l1")
      const mine = yield* createSchedule(s.partner1, s.own, "daily")
      const theirs = yield* createSchedule(s.partner2, s.own, "monthly")
      const r = yield* call("GET", "/transactions/schedules", { token: s.partner1 })
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ status: "success", error: false, data: { schedules: [mine] } })
      const other = yield* call("GET", "/transactions/schedules", { token: s.partner2 })
      expect((other.body as Json).data.schedules).toEqual([theirs])
      const user = yield* call("GET", "/transactions/schedules", { token: s.user })
      expect(((user.body as Json).data.schedules as Array<Json>).map((x) => x.schedule_id).sort()).toEqual(
        [mine.schedule_id, theirs.schedule_id].sort()
      )
    })
  )

  it.effect("GET by id: the creating partner reads it; another partner or another user gets 404", () =>
    Effect.gen(function* () {
      const s = yield* setup("sch_l2")
      const other = yield* setup("sch_l3")
      const schedule = yield* createSchedule(s.partner1, s.own)
      const r = yield* call("GET", `/transactions/schedules/${schedule.schedule_id}`, { token: s.partner1 })
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ status: "success", error: false, data: schedule })
      const byOtherPartner = yield* call("GET", `/transactions/schedules/${schedule.schedule_id}`, {
        token: s.partner2
      })
      expect(byOtherPartner.status).toBe(404)
      expect(byOtherPartner.body).toEqual(statusError("schedule.not.found"))
      const byOtherUser = yield* call("GET", `/transactions/schedules/${schedule.schedule_id}`, {
        token: other.user
      })
      expect(byOtherUser.status).toBe(404)
      expect(byOtherUser.body).toEqual(statusError("schedule.not.found"))
    })
  )
})

layer(serverLayer())("PATCH /transactions/schedules/{schedule_id}", (it) => {
  it.effect("the creating partner changes status and frequency; the account follows", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(noon)
      const s = yield* setup("sch_p1")
      const schedule = yield* createSchedule(s.partner1, s.own, "daily")
      const weekly = yield* call("PATCH", `/transactions/schedules/${schedule.schedule_id}`, {
        token: s.partner1,
        body: { frequency: "weekly" }
      })
      expect(weekly.status).toBe(200)
      expect(weekly.body).toEqual({
        status: "success",
        error: false,
        data: {
          ...schedule,
          frequency: "weekly",
          // Monday 23 November 2026, 00:00 in Buenos Aires.
          next_run_date: "2026-11-23T03:00:00.000Z"
        }
      })
      const inactive = yield* call("PATCH", `/transactions/schedules/${schedule.schedule_id}`, {
        token: s.partner1,
        body: { schedule_status: "inactive" }
      })
      expect(inactive.status).toBe(200)
      expect((inactive.body as Json).data.schedule_status).toBe("inactive")
      const account = yield* call("GET", "/users/sch_p1/account", { token: s.partner1 })
      expect((account.body as Json).data).not.toHaveProperty("payout_schedule")
    })
  )

  it.effect("another partner is 403 schedule.forbidden and nothing changes; a user token is 403", () =>
    Effect.gen(function* () {
      const s = yield* setup("sch_p2")
      const schedule = yield* createSchedule(s.partner1, s.own, "daily")
      const r = yield* call("PATCH", `/transactions/schedules/${schedule.schedule_id}`, {
        token: s.partner2,
        body: { schedule_status: "inactive" }
      })
      expect(r.status).toBe(403)
      expect(r.body).toEqual(statusError("schedule.forbidden"))
      const byUser = yield* call("PATCH", `/transactions/schedules/${schedule.schedule_id}`, {
        token: s.user,
        body: { schedule_status: "inactive" }
      })
      expect(byUser.status).toBe(403)
      expect(byUser.body).toEqual(statusError("schedule.partner.required"))
      const read = yield* call("GET", `/transactions/schedules/${schedule.schedule_id}`, {
        token: s.partner1
      })
      expect((read.body as Json).data.schedule_status).toBe("active")
    })
  )

  it.effect("an unknown schedule is 404; a bad status or a foreign address is 400 on the field", () =>
    Effect.gen(function* () {
      const s = yield* setup("sch_p3")
      const schedule = yield* createSchedule(s.partner1, s.own, "daily")
      const unknown = yield* call("PATCH", "/transactions/schedules/sch_nope", {
        token: s.partner1,
        body: { frequency: "daily" }
      })
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual(statusError("schedule.not.found"))
      const status = yield* call("PATCH", `/transactions/schedules/${schedule.schedule_id}`, {
        token: s.partner1,
        body: { schedule_status: "paused" }
      })
      expect(status.status).toBe(400)
      expect(status.body).toEqual(statusError("request.invalid", { field: "schedule_status" }))
      const stranger = yield* bankHolder("Tercero")
      const address = yield* call("PATCH", `/transactions/schedules/${schedule.schedule_id}`, {
        token: s.partner1,
        body: { address: stranger }
      })
      expect(address.status).toBe(400)
      expect(address.body).toEqual(statusError("schedule.address.holder.mismatch", { field: "address" }))
    })
  )
})
