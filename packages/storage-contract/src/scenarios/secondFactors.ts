/**
 * Merchants' second factors (`SecondFactorRepository`): one enrolled and one pending factor per
 * merchant, each write replacing the row of its key, removal, and e-mailed codes by subject;
 * what a rolled-back unit of work wrote is gone.
 */
import { expect } from "@effect/vitest"
import { SecondFactorRepository as Repo, Transactor } from "@cobro/core/ports"
import { DateTime, Effect, Exit, Option } from "effect"
import type { Scenario } from "../Scenario.js"
import { seedUser, u1, u2 } from "./fixtures.js"

const at = (ms: number) => DateTime.unsafeMake(ms)

const factor = (fields: Partial<ConstructorParameters<typeof Repo.StoredFactor>[0]> = {}) =>
  new Repo.StoredFactor({
    user_id: u1,
    status: "PENDING",
    kind: "totp",
    secret_sealed: "v1.sealed-secret",
    last_step: null,
    failures: 0,
    locked_until: null,
    creation_timestamp: at(1_000),
    exp_timestamp: at(601_000),
    confirmed_timestamp: null,
    ...fields
  })

const code = (fields: Partial<ConstructorParameters<typeof Repo.OneTimeCode>[0]> = {}) =>
  new Repo.OneTimeCode({
    subject: "vreq_1",
    user_id: u1,
    code_hash: "v1.key$abcdef",
    attempts: 0,
    creation_timestamp: at(1_000),
    exp_timestamp: at(601_000),
    used_timestamp: null,
    ...fields
  })

export const secondFactorScenarios: ReadonlyArray<Scenario> = [
  {
    name: "second factors: one pending and one enrolled per merchant, replaced and removed by key",
    run: Effect.gen(function* () {
      yield* seedUser()
      yield* seedUser({ user_id: u2, email: "dos@example.com" })
      const repo = yield* Repo.SecondFactorRepository
      expect(yield* repo.findFactor(u1, "PENDING", false)).toEqual(Option.none())
      const pending = factor()
      yield* repo.putFactor(pending)
      expect(yield* repo.findFactor(u1, "PENDING", false)).toEqual(Option.some(pending))
      expect(yield* repo.findFactor(u1, "ACTIVE", false)).toEqual(Option.none())
      expect(yield* repo.findFactor(u2, "PENDING", false)).toEqual(Option.none())
      // Enrolled: a TOTP step past 2^32 (a time step is about 5.9e7 today) and every time set.
      const active = factor({
        status: "ACTIVE",
        last_step: 5_000_000_000,
        failures: 3,
        locked_until: at(2_000),
        exp_timestamp: null,
        confirmed_timestamp: at(1_500)
      })
      yield* repo.putFactor(active)
      expect(yield* repo.findFactor(u1, "ACTIVE", true)).toEqual(Option.some(active))
      // A write replaces the row of its merchant and status.
      const email = factor({ kind: "email", secret_sealed: null, creation_timestamp: at(3_000) })
      yield* repo.putFactor(email)
      expect(yield* repo.findFactor(u1, "PENDING", false)).toEqual(Option.some(email))
      expect(yield* repo.findFactor(u1, "ACTIVE", false)).toEqual(Option.some(active))
      yield* repo.removeFactor(u1, "PENDING")
      yield* repo.removeFactor(u2, "ACTIVE")
      expect(yield* repo.findFactor(u1, "PENDING", false)).toEqual(Option.none())
      expect(yield* repo.findFactor(u1, "ACTIVE", false)).toEqual(Option.some(active))

      // A unit of work that fails leaves nothing of what it wrote.
      const transactor = yield* Transactor.Transactor
      const failed = yield* Effect.exit(
        transactor.withTransaction(
          Effect.gen(function* () {
            yield* repo.putFactor(new Repo.StoredFactor({ ...active, last_step: 5_000_000_001 }))
            yield* repo.removeFactor(u1, "ACTIVE")
            return yield* Effect.fail("rolled back")
          })
        )
      )
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* repo.findFactor(u1, "ACTIVE", false)).toEqual(Option.some(active))
    })
  },
  {
    name: "second factors: e-mailed codes by subject, replaced by a new code of the same subject",
    run: Effect.gen(function* () {
      yield* seedUser()
      const repo = yield* Repo.SecondFactorRepository
      expect(yield* repo.findCode("vreq_1", false)).toEqual(Option.none())
      const first = code()
      yield* repo.putCode(first)
      yield* repo.putCode(code({ subject: "enrol:u1", code_hash: "v1.other$0123" }))
      expect(yield* repo.findCode("vreq_1", true)).toEqual(Option.some(first))
      const spent = code({ attempts: 2, used_timestamp: at(5_000) })
      yield* repo.putCode(spent)
      expect(yield* repo.findCode("vreq_1", false)).toEqual(Option.some(spent))
      const again = code({
        code_hash: "v1.new$4567",
        creation_timestamp: at(9_000),
        exp_timestamp: at(609_000)
      })
      yield* repo.putCode(again)
      expect(yield* repo.findCode("vreq_1", false)).toEqual(Option.some(again))
      expect(Option.map(yield* repo.findCode("enrol:u1", false), (c) => c.code_hash)).toEqual(
        Option.some("v1.other$0123")
      )
    })
  }
]
