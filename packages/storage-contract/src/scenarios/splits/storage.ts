/** Split payments: the repository contract. */
import { expect } from "@effect/vitest"
import { BankAccount, BankProvider, DueScope, Ids, Split } from "@cobro/core"
import { SplitRepository, Transactor } from "@cobro/core/ports"
import { Duration, Effect, Option } from "effect"
import type { Scenario } from "../../Scenario.js"
import { ars, u1, u2 } from "../fixtures.js"
import { T0, HOLD, at, cbu } from "./helpers.js"

const p1 = Ids.PartnerId.make("p1")

const p2 = Ids.PartnerId.make("p2")

// ---------------------------------------------------------------------------------------------
// Records for the port-level contract

type SplitFields = ConstructorParameters<typeof Split.SplitPayment>[0]

/** A split record with a CVU and alias freshly opened at the sandbox bank. */
const splitRecord = (id: string, external_id: string, overrides: Partial<SplitFields> = {}) =>
  Effect.gen(function* () {
    const account = yield* (yield* BankProvider.BankProvider).openAccount({})
    return new Split.SplitPayment({
      split_payment_id: Ids.SplitPaymentId.make(id),
      user_id: u1,
      partner_id: null,
      external_id: Ids.ExternalId.make(external_id),
      webhook_url: null,
      cvu: account.cvu,
      alias: account.alias,
      ...Split.initialState(),
      creation_timestamp: at(T0),
      last_modified_timestamp: at(T0),
      ...overrides
    })
  })

const accountRecord = (id: string, user: Ids.UserId, createdMs: number) =>
  new Split.PayoutAccount({
    account_id: Ids.PayoutAccountId.make(id),
    user_id: user,
    partner_id: null,
    address: BankAccount.PayoutAddress.make(cbu(7)),
    bank_account: cbu(7),
    holder_name: "Ana Proveedora",
    holder_cuit: BankAccount.makeCuit("20", "30000007"),
    label: null,
    status: "PENDING_VERIFICATION",
    request_id: Ids.VerificationRequestId.make("vreq_1"),
    creation_timestamp: at(createdMs),
    activation_timestamp: null,
    disabled_timestamp: null,
    last_modified_timestamp: at(createdMs)
  })

const payoutRecord = (id: string, split: Split.SplitPayment, position: number, minor: bigint) =>
  new Split.SplitPayout({
    payout_id: Ids.SplitPayoutId.make(id),
    split_payment_id: split.split_payment_id,
    account_id: Ids.PayoutAccountId.make(`pacc_${position}`),
    destination: cbu(position + 1),
    amount: ars(minor),
    status: "PENDING",
    bank_transaction_id: null,
    failure_reason: null,
    position,
    creation_timestamp: at(T0),
    executed_timestamp: null
  })

// ---------------------------------------------------------------------------------------------
// Engine helpers (as packages/core/test/splitFixtures.ts)

export const splitStorageScenarios: ReadonlyArray<Scenario> = [
  {
    name: "splits: reads by id, external id (per user and partner) and CVU; Conflict keys; usable after a refusal",
    run: Effect.gen(function* () {
      const repo = yield* SplitRepository.SplitRepository
      const a = yield* splitRecord("split_a", "order-1")
      yield* repo.insert(a)
      expect(Option.getOrThrow(yield* repo.findById(a.split_payment_id))).toEqual(a)
      expect(Option.getOrThrow(yield* repo.findByIdForUpdate(a.split_payment_id))).toEqual(a)
      expect(Option.getOrThrow(yield* repo.findByExternalId(u1, null, a.external_id))).toEqual(a)
      expect(Option.getOrThrow(yield* repo.findByCvu(a.cvu))).toEqual(a)
      expect(yield* repo.findById(Ids.SplitPaymentId.make("split_nope"))).toEqual(Option.none())
      expect(yield* repo.findByExternalId(u1, p1, a.external_id)).toEqual(Option.none())
      expect(yield* repo.findByExternalId(u2, null, a.external_id)).toEqual(Option.none())

      // The same id, or the same (user, no partner, external id): split.external_id.taken.
      expect(yield* Effect.flip(repo.insert(a))).toMatchObject({
        _tag: "Conflict",
        key: "split.external_id.taken"
      })
      const b = yield* splitRecord("split_b", "order-1")
      expect(yield* Effect.flip(repo.insert(b))).toMatchObject({ key: "split.external_id.taken" })
      // The same CVU under another external id: split.cvu.taken.
      const sameCvu = new Split.SplitPayment({
        ...b,
        external_id: Ids.ExternalId.make("order-2"),
        cvu: a.cvu
      })
      expect(yield* Effect.flip(repo.insert(sameCvu))).toMatchObject({ key: "split.cvu.taken" })
      expect(yield* repo.findById(b.split_payment_id)).toEqual(Option.none())

      // A partner, or another user, may reuse the external id; each partner once.
      const ofP1 = new Split.SplitPayment({ ...b, partner_id: p1 })
      yield* repo.insert(ofP1)
      const ofU2 = yield* splitRecord("split_c", "order-1", { user_id: u2 })
      yield* repo.insert(ofU2)
      const againP1 = yield* splitRecord("split_d", "order-1", { partner_id: p1 })
      expect(yield* Effect.flip(repo.insert(againP1))).toMatchObject({ key: "split.external_id.taken" })
      const ofP2 = new Split.SplitPayment({ ...againP1, partner_id: p2 })
      yield* repo.insert(ofP2)
      expect(Option.getOrThrow(yield* repo.findByExternalId(u1, null, a.external_id))).toEqual(a)
      expect(Option.getOrThrow(yield* repo.findByExternalId(u1, p1, a.external_id))).toEqual(ofP1)
      expect(Option.getOrThrow(yield* repo.findByExternalId(u1, p2, a.external_id))).toEqual(ofP2)
      expect(Option.getOrThrow(yield* repo.findByExternalId(u2, null, a.external_id))).toEqual(ofU2)
      expect(Option.getOrThrow(yield* repo.findByCvu(ofP1.cvu))).toEqual(ofP1)

      // Inside a unit of work a refused insert leaves the transaction usable.
      const received = new Split.SplitPayment({
        ...a,
        payment_status: "RECEIVED",
        amount_received: ars(100000n),
        amount_credited: ars(98790n),
        last_modified_timestamp: at(T0 + 1000)
      })
      yield* (yield* Transactor.Transactor).withTransaction(
        Effect.gen(function* () {
          expect(yield* Effect.flip(repo.insert(a))).toMatchObject({ key: "split.external_id.taken" })
          expect(Option.getOrThrow(yield* repo.findByIdForUpdate(a.split_payment_id))).toEqual(a)
          yield* repo.update(received)
        })
      )
      expect(Option.getOrThrow(yield* repo.findById(a.split_payment_id))).toEqual(received)
      expect(Option.getOrThrow(yield* repo.findByCvu(a.cvu))).toEqual(received)
      // Updating a split that does not exist stores nothing.
      yield* repo.update(
        new Split.SplitPayment({ ...a, split_payment_id: Ids.SplitPaymentId.make("split_zz") })
      )
      expect(yield* repo.findById(Ids.SplitPaymentId.make("split_zz"))).toEqual(Option.none())
    })
  },
  {
    name: "splits: due splits by hold end (ON_HOLD) or lease end (PROCESSING), oldest first, limited",
    run: Effect.gen(function* () {
      const repo = yield* SplitRepository.SplitRepository
      const onHold = (ms: number) => ({ payout_status: "ON_HOLD" as const, hold_until: at(ms) })
      const processing = (ms: number) => ({
        payout_status: "PROCESSING" as const,
        hold_until: at(T0 - HOLD),
        lease_until: at(ms)
      })
      const records = [
        yield* splitRecord("split_1", "o1", onHold(T0 + 100)),
        yield* splitRecord("split_2", "o2", onHold(T0 + 50)),
        yield* splitRecord("split_3", "o3", processing(T0 + 50)),
        yield* splitRecord("split_4", "o4", onHold(T0 + 1000)),
        yield* splitRecord("split_5", "o5", { payout_status: "SUCCESS", hold_until: at(T0) }),
        yield* splitRecord("split_6", "o6"),
        yield* splitRecord("split_7", "o7", { ...processing(T0 + 10), hold_until: at(T0 + 5000) }),
        yield* splitRecord("split_8", "o8", { ...onHold(T0 + 100), lease_until: at(T0) }),
        yield* splitRecord("split_0", "o0", onHold(T0 + 100))
      ]
      // Inserted out of order; ties on the due time are ordered by id.
      for (const r of [...records].reverse()) yield* repo.insert(r)
      const due = (ms: number, limit = 100) =>
        Effect.map(repo.findDue(at(ms), limit), (rows) => rows.map((s) => s.split_payment_id))

      expect(yield* due(T0 + 9)).toEqual([])
      expect(yield* due(T0 + 10)).toEqual(["split_7"])
      expect(yield* due(T0 + 100)).toEqual(["split_7", "split_2", "split_3", "split_0", "split_1", "split_8"])
      expect(yield* due(T0 + 100, 2)).toEqual(["split_7", "split_2"])
      expect(yield* due(T0 + 10_000)).toEqual([
        "split_7",
        "split_2",
        "split_3",
        "split_0",
        "split_1",
        "split_8",
        "split_4"
      ])
      const found = yield* repo.findDue(at(T0 + 10), 1)
      expect(found).toEqual([records[6]])
      // Scoped: every split here is u1's.
      const ids = (rows: ReadonlyArray<Split.SplitPayment>) => rows.map((r) => r.split_payment_id)
      expect(ids(yield* repo.findDue(at(T0 + 100), 2, DueScope.only(u1)))).toEqual(["split_7", "split_2"])
      expect(yield* repo.findDue(at(T0 + 100), 100, DueScope.only(u2))).toEqual([])
      expect(yield* repo.findDue(at(T0 + 100), 100, DueScope.allBut([u1]))).toEqual([])
      expect(ids(yield* repo.findDue(at(T0 + 100), 100, DueScope.allBut([u2])))).toEqual(yield* due(T0 + 100))

      // Updates move splits in and out: finished, claimed with a new lease, claimed early.
      const byId = (id: string) => Effect.map(repo.findById(Ids.SplitPaymentId.make(id)), Option.getOrThrow)
      yield* repo.update(
        new Split.SplitPayment({ ...(yield* byId("split_7")), payout_status: "SUCCESS", lease_until: null })
      )
      yield* repo.update(new Split.SplitPayment({ ...(yield* byId("split_4")), ...processing(T0 + 20) }))
      yield* repo.update(new Split.SplitPayment({ ...(yield* byId("split_1")), ...processing(T0 + 2000) }))
      expect(yield* due(T0 + 100)).toEqual(["split_4", "split_2", "split_3", "split_0", "split_8"])
      expect(yield* due(T0 + 10_000)).toEqual([
        "split_4",
        "split_2",
        "split_3",
        "split_0",
        "split_8",
        "split_1"
      ])
    })
  },
  {
    name: "splits: payouts in instruction order, updated in place; payout accounts oldest first; verification requests",
    run: Effect.gen(function* () {
      const repo = yield* SplitRepository.SplitRepository
      const transactor = yield* Transactor.Transactor
      const split = yield* splitRecord("split_a", "order-1")
      const other = yield* splitRecord("split_b", "order-2")
      yield* repo.insert(split)
      yield* repo.insert(other)

      const payouts = [0, 1, 2].map((i) => payoutRecord(`spo_${"zyx"[i]}`, split, i, BigInt(1000 * (i + 1))))
      const otherPayout = payoutRecord("spo_a", other, 0, 5n)
      yield* repo.insertPayouts([payouts[2]!, otherPayout, payouts[0]!, payouts[1]!])
      yield* repo.insertPayouts([])
      expect(yield* repo.payoutsOf(split.split_payment_id)).toEqual(payouts)
      expect(yield* repo.payoutsOf(other.split_payment_id)).toEqual([otherPayout])
      expect(yield* repo.payoutsOf(Ids.SplitPaymentId.make("split_nope"))).toEqual([])
      const settled = new Split.SplitPayout({
        ...payouts[1]!,
        status: "SUCCESS",
        bank_transaction_id: Ids.BankTransactionId.make("bt_1"),
        executed_timestamp: at(T0 + HOLD)
      })
      const failed = new Split.SplitPayout({
        ...payouts[2]!,
        status: "FAILED",
        failure_reason: "rejected by the bank",
        executed_timestamp: at(T0 + HOLD)
      })
      yield* transactor.withTransaction(
        Effect.gen(function* () {
          yield* repo.findByIdForUpdate(split.split_payment_id)
          yield* repo.updatePayout(settled)
          yield* repo.updatePayout(failed)
        })
      )
      // An unknown payout changes nothing.
      yield* repo.updatePayout(
        new Split.SplitPayout({ ...settled, payout_id: Ids.SplitPayoutId.make("spo_q") })
      )
      expect(yield* repo.payoutsOf(split.split_payment_id)).toEqual([payouts[0], settled, failed])
      expect(yield* repo.payoutsOf(other.split_payment_id)).toEqual([otherPayout])

      // Payout accounts: a user's, by creation time then id; another user's (even "u10") apart.
      const u10 = Ids.UserId.make("u10")
      const sameMsB = accountRecord("pacc_b", u1, T0)
      const sameMsA = accountRecord("pacc_a", u1, T0)
      const later = accountRecord("pacc_0", u1, T0 + 1000)
      const earlier = accountRecord("pacc_z", u1, T0 - 1000)
      const ofU2 = accountRecord("pacc_c", u2, T0)
      const ofU10 = accountRecord("pacc_d", u10, T0)
      yield* repo.insertAccounts([sameMsB, ofU10, sameMsA, ofU2])
      yield* repo.insertAccounts([later, earlier])
      yield* repo.insertAccounts([])
      expect(yield* repo.accountsOf(u1)).toEqual([earlier, sameMsA, sameMsB, later])
      expect(yield* repo.accountsOf(u2)).toEqual([ofU2])
      expect(yield* repo.accountsOf(u10)).toEqual([ofU10])
      expect(yield* repo.accountsOf(Ids.UserId.make("u"))).toEqual([])
      const activated = new Split.PayoutAccount({
        ...sameMsA,
        status: "ACTIVE",
        activation_timestamp: at(T0 + 60_000),
        last_modified_timestamp: at(T0 + 60_000)
      })
      yield* transactor.withTransaction(
        Effect.gen(function* () {
          expect(Option.getOrThrow(yield* repo.findAccountForUpdate(sameMsA.account_id))).toEqual(sameMsA)
          yield* repo.updateAccount(activated)
        })
      )
      expect(Option.getOrThrow(yield* repo.findAccount(sameMsA.account_id))).toEqual(activated)
      expect(yield* repo.accountsOf(u1)).toEqual([earlier, activated, sameMsB, later])
      const ghost = accountRecord("pacc_ghost", u1, T0)
      yield* repo.updateAccount(ghost)
      expect(yield* repo.findAccount(ghost.account_id)).toEqual(Option.none())
      expect(yield* repo.findAccountForUpdate(ghost.account_id)).toEqual(Option.none())

      // Verification requests: the attempts counter under lock.
      const request = new Split.VerificationRequest({
        request_id: Ids.VerificationRequestId.make("vreq_1"),
        user_id: u1,
        account_ids: [sameMsA.account_id, sameMsB.account_id],
        status: "PENDING",
        attempts: 0,
        exp_timestamp: at(T0 + Duration.toMillis(Split.verificationLifetime)),
        creation_timestamp: at(T0),
        verified_timestamp: null
      })
      yield* repo.insertRequest(request)
      expect(Option.getOrThrow(yield* repo.findRequest(request.request_id))).toEqual(request)
      for (let i = 1; i <= Split.maxVerificationAttempts; i++) {
        yield* transactor.withTransaction(
          Effect.gen(function* () {
            const current = Option.getOrThrow(yield* repo.findRequestForUpdate(request.request_id))
            const attempts = current.attempts + 1
            yield* repo.updateRequest(
              new Split.VerificationRequest({
                ...current,
                attempts,
                status: attempts >= Split.maxVerificationAttempts ? "LOCKED" : "PENDING"
              })
            )
          })
        )
      }
      expect(Option.getOrThrow(yield* repo.findRequest(request.request_id))).toEqual(
        new Split.VerificationRequest({ ...request, attempts: 5, status: "LOCKED" })
      )
      const unknown = Ids.VerificationRequestId.make("vreq_nope")
      yield* repo.updateRequest(new Split.VerificationRequest({ ...request, request_id: unknown }))
      expect(yield* repo.findRequest(unknown)).toEqual(Option.none())
      expect(yield* repo.findRequestForUpdate(unknown)).toEqual(Option.none())
    })
  }
]
