/**
 * Payout schedules: partners create, list and change them for their users; `runDue` (called by
 * `Jobs.runDue`) sweeps each due merchant's available balance to the schedule's address, once
 * per run and without losing money when the bank fails (see `internal/payoutRuns.ts`).
 */
import { DateTime, Effect, Option } from "effect"
import { BankProvider } from "../bank/BankProvider.js"
import { NotPermitted, InvalidInput, NotFound, ProviderFailure } from "../Errors.js"
import { type PartnerId, ScheduleId, type UserId } from "../Ids.js"
import { newId } from "../internal/ids.js"
import { makePayoutRuns } from "./payoutRuns.js"
import type { Principal } from "../Principal.js"
import * as S from "./Schedule.js"
import { ScheduleRepository } from "./ScheduleRepository.js"
import * as Idempotency from "../Idempotency.js"
import { Transactor } from "../Transactor.js"
import { PayoutScheduleConfig, User } from "../accounts/User.js"
import { UserRepository } from "../accounts/UserRepository.js"
import * as Spans from "../Spans.js"

export { type PayoutRunReport, payoutRetryAfter } from "./payoutRuns.js"

export class Schedules extends Effect.Service<Schedules>()("@cobro/core/Schedules", {
  effect: Effect.gen(function* () {
    const repo = yield* ScheduleRepository
    const users = yield* UserRepository
    const bank = yield* BankProvider
    const transactor = yield* Transactor

    const partnerOf = (principal: Principal) =>
      principal._tag === "Partner"
        ? Effect.succeed(principal)
        : Effect.fail(
            new NotPermitted({
              key: "schedule.partner.required",
              message: "payout schedules are created and changed with a partner token"
            })
          )

    const findUser = (id: UserId) =>
      Effect.flatMap(
        users.findById(id),
        Option.match({ onNone: () => Effect.fail(NotFound.of("user", id)), onSome: Effect.succeed })
      )

    /** A schedule of the caller's user; another user's schedule does not exist for the caller. */
    const findOwned = (user: UserId, id: ScheduleId) =>
      Effect.flatMap(
        repo.findById(id),
        Option.match({
          onNone: () => Effect.fail(NotFound.of("schedule", id)),
          onSome: (s) => (s.user_id === user ? Effect.succeed(s) : Effect.fail(NotFound.of("schedule", id)))
        })
      )

    /** Whether the caller sees the schedule: a partner its own, a user all of its own. */
    const visibleTo = (principal: Principal, schedule: S.PayoutSchedule) =>
      principal._tag === "User" || schedule.partner_id === principal.partner_id

    /** The address must be an account the merchant holds (same CUIT), as the bank reports it. */
    const checkHolder = (user: User, address: string, field: string) =>
      Effect.gen(function* () {
        const holder = yield* bank.lookupHolder(address).pipe(
          Effect.mapError((e): InvalidInput | ProviderFailure =>
            e.reason === "holder_not_found"
              ? InvalidInput.of(field, `no bank account found for ${address}`, "schedule.address.not.found")
              : new ProviderFailure({
                  key: "bank.unavailable",
                  message: `the bank could not look up ${address}: ${e.message}`
                })
          )
        )
        if (holder.cuit !== user.cuit) {
          return yield* InvalidInput.of(
            field,
            `the holder of ${address} is not the account's owner (CUIT differs)`,
            "schedule.address.holder.mismatch"
          )
        }
      })

    /**
     * Keeps the account's `payout_schedule` in step with the schedule just created or changed:
     * an active one becomes the account's; when it went inactive, the account keeps another
     * active schedule it already shows, else takes the user's most recently changed active one,
     * else null. Runs inside the caller's unit of work.
     */
    const syncAccount = (touched: S.PayoutSchedule, now: DateTime.Utc) =>
      Effect.gen(function* () {
        const user = yield* findUser(touched.user_id)
        const current = user.payout_schedule
        const shows = (s: S.PayoutSchedule) =>
          current !== null && current.address === s.payload.address && current.frequency === s.frequency
        let wanted: S.PayoutSchedule | undefined = touched
        if (touched.schedule_status !== "active") {
          const active = (yield* repo.listByUser(touched.user_id)).filter(
            (s) => s.schedule_status === "active"
          )
          wanted =
            active.find(shows) ??
            active.reduce<S.PayoutSchedule | undefined>(
              (best, s) =>
                best === undefined ||
                !DateTime.lessThan(s.last_modified_timestamp, best.last_modified_timestamp)
                  ? s
                  : best,
              undefined
            )
        }
        if (wanted === undefined ? current === null : shows(wanted)) return
        const payout_schedule =
          wanted === undefined
            ? null
            : new PayoutScheduleConfig({ address: wanted.payload.address, frequency: wanted.frequency })
        yield* users.update(new User({ ...user, payout_schedule, last_modified_timestamp: now }))
      })

    const create = Spans.fn("Schedules.create")(function* (
      principal: Principal,
      request: S.CreateScheduleRequest
    ) {
      const caller = yield* partnerOf(principal)
      const user = yield* findUser(caller.user_id)
      yield* checkHolder(user, request.payload.address, "payload.address")
      const now = yield* DateTime.now
      const schedule = new S.PayoutSchedule({
        schedule_id: ScheduleId.make(yield* newId("sch")),
        schedule_type: request.schedule_type,
        frequency: request.frequency,
        schedule_status: "active",
        next_run_date: S.nextRunDate(request.frequency, now),
        creation_timestamp: now,
        user_id: user.user_id,
        payload: request.payload,
        partner_id: caller.partner_id,
        last_modified_timestamp: now
      })
      return yield* transactor.withTransaction(
        repo
          .insert(schedule)
          .pipe(
            Effect.zipRight(syncAccount(schedule, now)),
            Effect.zipRight(Idempotency.committing(schedule)),
            Effect.as(schedule)
          )
      )
    })

    /** A partner sees the schedules it created for its user; a user token sees all of its own. */
    const list = Spans.fn("Schedules.list")(function* (principal: Principal) {
      return principal._tag === "Partner"
        ? yield* repo.listByUserAndPartner(principal.user_id, principal.partner_id)
        : yield* repo.listByUser(principal.user_id)
    })

    const get = Spans.fn("Schedules.get")(function* (principal: Principal, id: ScheduleId) {
      const schedule = yield* findOwned(principal.user_id, id)
      if (!visibleTo(principal, schedule)) return yield* NotFound.of("schedule", id)
      return schedule
    })

    /** The payouts a schedule's runs made, oldest first. */
    const payouts = Spans.fn("Schedules.payouts")(function* (principal: Principal, id: ScheduleId) {
      yield* get(principal, id)
      return yield* repo.listPayouts(id)
    })

    const patch = Spans.fn("Schedules.patch")(function* (
      principal: Principal,
      id: ScheduleId,
      request: S.PatchScheduleRequest
    ) {
      const caller = yield* partnerOf(principal)
      const existing = yield* findOwned(caller.user_id, id)
      yield* ensureCreator(caller.partner_id, existing)
      if (request.address !== undefined && request.address !== existing.payload.address) {
        yield* checkHolder(yield* findUser(caller.user_id), request.address, "address")
      }
      const now = yield* DateTime.now
      return yield* transactor.withTransaction(
        Effect.gen(function* () {
          const current = Option.getOrElse(yield* repo.findByIdForUpdate(id), () => existing)
          const status = request.schedule_status ?? current.schedule_status
          const move = yield* S.guardSchedule(current.schedule_status, status)
          const frequency = request.frequency ?? current.frequency
          const address = request.address ?? current.payload.address
          const unchanged =
            status === current.schedule_status &&
            frequency === current.frequency &&
            address === current.payload.address
          if (unchanged) return current
          const updated = new S.PayoutSchedule({
            ...current,
            frequency,
            schedule_status: status,
            payload: new S.SchedulePayload({ address }),
            next_run_date:
              move.restartsCalendar || frequency !== current.frequency
                ? S.nextRunDate(frequency, now)
                : current.next_run_date,
            last_modified_timestamp: now
          })
          yield* repo.update(updated)
          yield* syncAccount(updated, now)
          return updated
        })
      )
    })

    /** SPEC: only the partner that created a schedule may change it (403). */
    const ensureCreator = (partner: PartnerId, schedule: S.PayoutSchedule) =>
      schedule.partner_id === partner
        ? Effect.void
        : Effect.fail(
            new NotPermitted({
              key: "schedule.forbidden",
              message: "only the partner that created this schedule can change it"
            })
          )

    const { runDue } = yield* makePayoutRuns

    return { create, list, get, payouts, patch, runDue } as const
  })
}) {}
