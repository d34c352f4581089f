/**
 * The dashboard's sessions and partners' passwords (`WebSessionRepository`): sessions stored and
 * found by the hash of their token, their last use moved, one ended, every session of a merchant
 * or a partner ended (and no one else's); partners' passwords replaced by key; what a rolled-back
 * unit of work wrote is gone; the ended ones purged.
 */
import { expect } from "@effect/vitest"
import { Ids } from "@cobro/core"
import { PartnerRepository, Transactor, WebSessionRepository as Repo } from "@cobro/core/ports"
import { DateTime, Effect, Exit, Option } from "effect"
import type { Scenario } from "../Scenario.js"
import { partner } from "./auth/helpers.js"
import { seedUser, u1, u2 } from "./fixtures.js"

const at = (ms: number) => DateTime.unsafeMake(ms)
const p1 = Ids.PartnerId.make("prt_one")

const session = (fields: Partial<ConstructorParameters<typeof Repo.WebSession>[0]> = {}) =>
  new Repo.WebSession({
    session_hash: "a".repeat(64),
    kind: "user",
    user_id: u1,
    partner_id: null,
    creation_timestamp: at(1_000),
    last_seen_timestamp: at(1_000),
    ...fields
  })

export const webSessionScenarios: ReadonlyArray<Scenario> = [
  {
    name: "web sessions: found by hash, touched, ended one by one and all of one merchant or partner",
    run: Effect.gen(function* () {
      yield* seedUser()
      yield* seedUser({ user_id: u2, email: "dos@example.com" })
      yield* (yield* PartnerRepository.PartnerRepository).insert(partner({ partner_id: p1 }))
      const repo = yield* Repo.WebSessionRepository
      expect(yield* repo.findSession("a".repeat(64))).toEqual(Option.none())
      const mine = session()
      const mineToo = session({ session_hash: "b".repeat(64), creation_timestamp: at(2_000) })
      const other = session({ session_hash: "c".repeat(64), user_id: u2 })
      const partners = session({
        session_hash: "d".repeat(64),
        kind: "partner",
        user_id: null,
        partner_id: p1
      })
      for (const s of [mine, mineToo, other, partners]) yield* repo.insertSession(s)
      expect(yield* repo.findSession(mine.session_hash)).toEqual(Option.some(mine))
      expect(yield* repo.findSession(partners.session_hash)).toEqual(Option.some(partners))

      // A time past 2^32 milliseconds and past 2^31 seconds (2038): stored exactly.
      const later = at(4_102_444_800_123)
      yield* repo.touchSession(mine.session_hash, later)
      expect(yield* repo.findSession(mine.session_hash)).toEqual(
        Option.some(new Repo.WebSession({ ...mine, last_seen_timestamp: later }))
      )
      yield* repo.touchSession("z".repeat(64), later)
      expect(yield* repo.findSession("z".repeat(64))).toEqual(Option.none())

      yield* repo.deleteSession(mineToo.session_hash)
      expect(yield* repo.findSession(mineToo.session_hash)).toEqual(Option.none())
      expect(Option.isSome(yield* repo.findSession(mine.session_hash))).toBe(true)

      yield* repo.deleteSessionsOf("user", u1)
      expect(yield* repo.findSession(mine.session_hash)).toEqual(Option.none())
      expect(yield* repo.findSession(other.session_hash)).toEqual(Option.some(other))
      expect(yield* repo.findSession(partners.session_hash)).toEqual(Option.some(partners))
      // A partner's id that is also a user id ends only that kind's sessions.
      yield* repo.deleteSessionsOf("partner", u2)
      expect(yield* repo.findSession(other.session_hash)).toEqual(Option.some(other))
      yield* repo.deleteSessionsOf("partner", p1)
      expect(yield* repo.findSession(partners.session_hash)).toEqual(Option.none())

      // A unit of work that fails leaves nothing of what it wrote.
      const transactor = yield* Transactor.Transactor
      const failed = yield* Effect.exit(
        transactor.withTransaction(
          Effect.gen(function* () {
            yield* repo.insertSession(session({ session_hash: "e".repeat(64) }))
            yield* repo.deleteSession(other.session_hash)
            return yield* Effect.fail("rolled back")
          })
        )
      )
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* repo.findSession("e".repeat(64))).toEqual(Option.none())
      expect(yield* repo.findSession(other.session_hash)).toEqual(Option.some(other))
    })
  },
  {
    name: "web sessions: the ended ones purged, by idle time or by age (at the limit included), and only those",
    run: Effect.gen(function* () {
      yield* seedUser()
      const repo = yield* Repo.WebSessionRepository
      // Last used at or before 5_000 or opened at or before 2_000: ended (as `WebSessions.resolve` ends them).
      const idle = session({
        session_hash: "a".repeat(64),
        creation_timestamp: at(3_000),
        last_seen_timestamp: at(4_999)
      })
      const old = session({
        session_hash: "b".repeat(64),
        creation_timestamp: at(1_999),
        last_seen_timestamp: at(9_000)
      })
      const idleAtLimit = session({
        session_hash: "c".repeat(64),
        creation_timestamp: at(3_000),
        last_seen_timestamp: at(5_000)
      })
      const oldAtLimit = session({
        session_hash: "e".repeat(64),
        creation_timestamp: at(2_000),
        last_seen_timestamp: at(9_000)
      })
      const fresh = session({
        session_hash: "d".repeat(64),
        creation_timestamp: at(2_001),
        last_seen_timestamp: at(5_001)
      })
      for (const s of [idle, old, idleAtLimit, oldAtLimit, fresh]) yield* repo.insertSession(s)
      expect(yield* repo.deleteExpired(at(5_000), at(2_000))).toBe(4)
      expect(yield* repo.findSession(idle.session_hash)).toEqual(Option.none())
      expect(yield* repo.findSession(old.session_hash)).toEqual(Option.none())
      expect(yield* repo.findSession(idleAtLimit.session_hash)).toEqual(Option.none())
      expect(yield* repo.findSession(oldAtLimit.session_hash)).toEqual(Option.none())
      expect(yield* repo.findSession(fresh.session_hash)).toEqual(Option.some(fresh))
      expect(yield* repo.deleteExpired(at(5_000), at(2_000))).toBe(0)
    })
  },
  {
    name: "web sessions: a partner's dashboard password, replaced by a new one",
    run: Effect.gen(function* () {
      yield* (yield* PartnerRepository.PartnerRepository).insert(partner({ partner_id: p1 }))
      const repo = yield* Repo.WebSessionRepository
      expect(yield* repo.findPartnerPassword(p1)).toEqual(Option.none())
      const first = new Repo.PartnerPassword({
        partner_id: p1,
        password_hash: "pbkdf2$1$a$b",
        updated_timestamp: at(1_000)
      })
      yield* repo.putPartnerPassword(first)
      expect(yield* repo.findPartnerPassword(p1)).toEqual(Option.some(first))
      const second = new Repo.PartnerPassword({
        partner_id: p1,
        password_hash: "pbkdf2$1$c$d",
        updated_timestamp: at(2_000)
      })
      yield* repo.putPartnerPassword(second)
      expect(yield* repo.findPartnerPassword(p1)).toEqual(Option.some(second))
      expect(yield* repo.findPartnerPassword(Ids.PartnerId.make("prt_none"))).toEqual(Option.none())
    })
  }
]
