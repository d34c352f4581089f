/**
 * Split payments: the `SplitRepository` contract (uniqueness and its Conflict keys, due splits,
 * payouts in instruction order, payout accounts oldest first, verification requests) and the
 * engine flows over it (create → fund → verified payout accounts → instruct → execution after
 * the 12-hour hold by concurrent job runs).
 */
import { expect } from "@effect/vitest"
import {
  BankAccount,
  BankProvider,
  Faucet,
  Ids,
  Jobs,
  Ledger,
  LedgerAccount,
  Money,
  Outbox,
  Principal,
  SandboxBank,
  SecondFactor,
  Split,
  SplitRepository,
  Splits,
  Transactor,
  Transfers
} from "@cobro/core"
import { DateTime, Duration, Effect, Option, Schema, TestClock } from "effect"
import type { EngineContext, Scenario } from "../Scenario.js"
import { ars, expectLedgerOk, seedUser, u1, u2 } from "./fixtures.js"

const T0 = Date.UTC(2026, 10, 20, 12, 0, 0)
export const HOLD = Duration.toMillis(Split.holdDuration)
const at = (ms: number) => DateTime.unsafeMake(ms)
const asU1 = Principal.Principal.User({ user_id: u1 })
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
      payment_status: "PENDING",
      payout_status: null,
      hold_until: null,
      amount_received: Money.zero("ARS"),
      amount_credited: Money.zero("ARS"),
      payouts_total: null,
      lease_until: null,
      creation_timestamp: at(T0),
      last_modified_timestamp: at(T0),
      ...overrides
    })
  })

const cbu = (n: number) => BankAccount.makeCbu("2850590", n.toString().padStart(13, "0"))

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

const createSplit = (external_id: string, principal: Principal.Principal = asU1) =>
  Effect.flatMap(Splits.Splits, (s) =>
    s.create(
      principal,
      Schema.decodeUnknownSync(Split.CreateSplitPaymentRequest)({
        external_id,
        webhook_url: "https://shop.example/hooks/split"
      })
    )
  )

export const read = (id: Ids.SplitPaymentId): Effect.Effect<Split.SplitPaymentView, unknown, EngineContext> =>
  Effect.flatMap(Splits.Splits, (s) => s.get(asU1, id))
const runDue = Effect.flatMap(Jobs.Jobs, (j) => j.runDue())
const sent = Effect.flatMap(SandboxBank.SandboxBank, (b) => b.sentTransfers)
const events = Effect.map(
  Effect.flatMap(Outbox.Outbox, (o) => o.list(0, 100_000)),
  (rows) => rows.map((r) => r.event)
)
const resultEvents = Effect.map(events, (all) => all.filter((e) => e.type === "split.payouts_result"))

/** An external bank account known to the sandbox bank (so its holder can be looked up). */
const registerPayee = (n: number, name: string) =>
  Effect.gen(function* () {
    const account = cbu(n)
    yield* (yield* SandboxBank.SandboxBank).registerHolder({
      account,
      cuit: BankAccount.makeCuit("20", (30000000 + n).toString()),
      name
    })
    return account as string
  })

const accountInputs = (...addresses: ReadonlyArray<string>) =>
  Schema.decodeUnknownSync(Split.PayoutAccountList)(addresses.map((address) => ({ address })))

const codeFor = (request_id: Ids.VerificationRequestId) =>
  Effect.map(
    Effect.flatMap(SecondFactor.SandboxSecondFactor, (s) => s.codeFor(request_id)),
    Option.getOrThrow
  )

const verify = (request_id: Ids.VerificationRequestId, code: string) =>
  Effect.flatMap(Splits.Splits, (s) =>
    s.verifyAccounts(asU1, Schema.decodeUnknownSync(Split.VerifyAccountsRequest)({ request_id, code }))
  )

/** Payout accounts created and verified with the code the sandbox delivered, all ACTIVE. */
const activeAccounts = (...addresses: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const request = yield* (yield* Splits.Splits).createAccounts(asU1, accountInputs(...addresses))
    return (yield* verify(request.request_id, yield* codeFor(request.request_id))).accounts
  })

const instruct = (id: Ids.SplitPaymentId, payouts: ReadonlyArray<{ account_id: string; amount: number }>) =>
  Effect.flatMap(Splits.Splits, (s) =>
    s.instructPayouts(asU1, id, Schema.decodeUnknownSync(Split.InstructPayoutsRequest)({ payouts }))
  )

/** The split's available and held balances in the ledger, in minor units. */
const balances = (id: Ids.SplitPaymentId) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger.Ledger
    const available = yield* ledger.balance(LedgerAccount.splitBalance(id))
    const held = yield* ledger.balance(LedgerAccount.splitHeld(id))
    return { available: available.minor, held: held.minor }
  })

/** 1000.00 received (600 by the faucet, 400 by a bank notification) credits 987.90 after fees. */
const fund = (cvu: BankAccount.Cvu) =>
  Effect.gen(function* () {
    const byFaucet = yield* (yield* Faucet.Faucet).send(u1, cvu, new Faucet.FaucetRequest({ amount: 600 }))
    expect(byFaucet.outcome._tag).toBe("Credited")
    const transfer = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({ cvu, amount: ars(40000n) })
    expect((yield* (yield* Transfers.Transfers).ingest(transfer))._tag).toBe("Credited")
  })

/** A funded split and two ACTIVE payout accounts; the split is instructed 500.00 + 400.00. */
export const instructedSplit = (
  failing?: SandboxBank.TransferFailure
): Effect.Effect<
  { readonly id: Ids.SplitPaymentId; readonly a: string; readonly b: string },
  unknown,
  EngineContext
> =>
  Effect.gen(function* () {
    yield* TestClock.setTime(T0)
    yield* seedUser()
    const split = yield* createSplit("order-1")
    yield* fund(split.cvu)
    const a = yield* registerPayee(1, "Ana Proveedora")
    const b = yield* registerPayee(2, "Beto Logistica")
    if (failing !== undefined) yield* (yield* SandboxBank.SandboxBank).failTransfersTo(b, failing)
    const [accountA, accountB] = yield* activeAccounts(a, b)
    const held = yield* instruct(split.split_payment_id, [
      { account_id: accountA!.account_id, amount: 500 },
      { account_id: accountB!.account_id, amount: 400 }
    ])
    return { id: split.split_payment_id, a, b, held } as const
  })

const runConcurrently = (n: number) =>
  Effect.map(
    Effect.all(
      Array.from({ length: n }, () => runDue),
      { concurrency: "unbounded" }
    ),
    (reports) => {
      const total = (k: keyof Split.SplitRunReport) => reports.reduce((acc, r) => acc + r.splits[k], 0)
      return {
        finished: total("finished"),
        sent: total("sent"),
        payouts_failed: total("payouts_failed"),
        failed: total("failed")
      }
    }
  )

export const splitScenarios: ReadonlyArray<Scenario> = [
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
  },
  {
    name: "splits flow: create, fund, verify accounts, instruct; after the 12 h hold concurrent runs pay each payout once",
    run: Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      yield* seedUser()
      const splits = yield* Splits.Splits
      const repo = yield* SplitRepository.SplitRepository

      // Concurrent identical creates answer one split; repeating it too.
      const created = yield* Effect.all(
        [createSplit("order-1"), createSplit("order-1"), createSplit("order-1")],
        {
          concurrency: "unbounded"
        }
      )
      const split = created[0]!
      const id = split.split_payment_id
      expect(created.map((s) => s.split_payment_id)).toEqual([id, id, id])
      expect((yield* createSplit("order-1")).cvu).toBe(split.cvu)
      expect(yield* (yield* SandboxBank.SandboxBank).isOpen(split.cvu)).toBe(true)
      expect(Option.getOrThrow(yield* splits.findByCvu(split.cvu)).split_payment_id).toBe(id)

      yield* fund(split.cvu)
      const funded = yield* read(id)
      expect(funded.payment_status).toBe("RECEIVED")
      expect(funded.amount_received).toEqual(ars(100000n))
      expect(funded.amount_credited).toEqual(ars(98790n))
      expect(funded.balance).toEqual(ars(98790n))

      // One request, one code for both accounts; a wrong code is counted first.
      const a = yield* registerPayee(1, "Ana Proveedora")
      const b = yield* registerPayee(2, "Beto Logistica")
      const request = yield* splits.createAccounts(asU1, accountInputs(a, b))
      const right = yield* codeFor(request.request_id)
      expect(
        yield* Effect.flip(verify(request.request_id, right === "000000" ? "111111" : "000000"))
      ).toMatchObject({
        key: "verification.code.invalid"
      })
      expect(Option.getOrThrow(yield* repo.findRequest(request.request_id)).attempts).toBe(1)
      const verified = yield* verify(request.request_id, right)
      expect(verified.status).toBe("VERIFIED")
      expect(verified.attempts_left).toBe(Split.maxVerificationAttempts - 1)
      const [accountA, accountB] = verified.accounts
      expect([accountA!.bank_account, accountB!.bank_account]).toEqual([a, b])
      // Created in the same millisecond: listed by id.
      const listed = yield* splits.listAccounts(asU1)
      expect(listed).toEqual([...verified.accounts].sort((x, y) => (x.account_id < y.account_id ? -1 : 1)))
      expect(listed.map((x) => x.status)).toEqual(["ACTIVE", "ACTIVE"])

      const held = yield* instruct(id, [
        { account_id: accountA!.account_id, amount: 500 },
        { account_id: accountB!.account_id, amount: 400 }
      ])
      expect(held.payout_status).toBe("ON_HOLD")
      expect(DateTime.toEpochMillis(held.hold_until!)).toBe(T0 + HOLD)
      expect(yield* read(id)).toEqual(held)
      expect(yield* balances(id)).toEqual({ available: 8790n, held: 90000n })
      // Money arriving after the instruction goes back to its sender.
      const late = yield* (yield* SandboxBank.SandboxBank).simulateIncoming({
        cvu: split.cvu,
        amount: ars(5000n)
      })
      expect((yield* (yield* Transfers.Transfers).ingest(late))._tag).toBe("Bounced")

      yield* TestClock.adjust(HOLD - 1)
      expect(yield* runConcurrently(3)).toEqual({ finished: 0, sent: 0, payouts_failed: 0, failed: 0 })
      expect(yield* sent).toEqual([])
      yield* TestClock.adjust(1)
      expect(yield* runConcurrently(3)).toEqual({ finished: 1, sent: 2, payouts_failed: 0, failed: 0 })

      const out = yield* sent
      expect(out.map((t) => [t.to, Money.format(t.amount)])).toEqual([
        [accountA!.bank_account, "500.00"],
        [accountB!.bank_account, "400.00"]
      ])
      const done = yield* read(id)
      expect(done.payout_status).toBe("SUCCESS")
      expect(done.payouts.map((p) => p.status)).toEqual(["SUCCESS", "SUCCESS"])
      expect(done.payouts.map((p) => p.payout_id)).toEqual(out.map((t) => t.reference))
      expect(done.payouts.map((p) => p.bank_transaction_id)).toEqual(out.map((t) => t.bank_transaction_id))
      expect(yield* balances(id)).toEqual({ available: 8790n, held: 0n })
      expect((yield* resultEvents).map((e) => e.payload)).toEqual([
        {
          message: "split.payouts_result",
          split_payment_id: id,
          external_id: "order-1",
          payout_status: "SUCCESS"
        }
      ])
      expect(yield* repo.findDue(at(T0 + 2 * HOLD), 10)).toEqual([])
      expect((yield* runDue).splits.finished).toBe(0)
      expect(yield* sent).toHaveLength(2)
      yield* expectLedgerOk
    })
  },
  {
    name: "splits flow: a rejected payout ends PARTIAL_FAILURE with its amount back in the split's balance",
    run: Effect.gen(function* () {
      const { b, id } = yield* instructedSplit("rejected")
      yield* TestClock.adjust(HOLD)
      expect(yield* runConcurrently(3)).toEqual({ finished: 1, sent: 1, payouts_failed: 1, failed: 0 })
      const done = yield* read(id)
      expect(done.payout_status).toBe("PARTIAL_FAILURE")
      expect(done.payouts.map((p) => p.status)).toEqual(["SUCCESS", "FAILED"])
      expect(done.payouts[1]!.failure_reason).not.toBeNull()
      expect(done.balance).toEqual(ars(48790n))
      expect(yield* balances(id)).toEqual({ available: 48790n, held: 0n })
      expect((yield* sent).map((t) => Money.format(t.amount))).toEqual(["500.00"])
      expect((yield* sent).some((t) => t.to === b)).toBe(false)
      expect((yield* resultEvents).map((e) => e.payload["payout_status"])).toEqual(["PARTIAL_FAILURE"])
      expect(
        yield* Effect.flip(instruct(id, [{ account_id: done.payouts[0]!.account_id, amount: 1 }]))
      ).toMatchObject({ key: "split.payouts.already_instructed" })
      yield* expectLedgerOk
    })
  },
  {
    name: "splits flow: a bank outage leaves the split PROCESSING; concurrent runs resume it once after the lease",
    run: Effect.gen(function* () {
      const { b, id } = yield* instructedSplit("unavailable")
      const repo = yield* SplitRepository.SplitRepository
      yield* TestClock.adjust(HOLD)
      expect((yield* runDue).splits).toEqual({ finished: 0, sent: 1, payouts_failed: 0, failed: 1 })
      const midway = yield* read(id)
      expect(midway.payout_status).toBe("PROCESSING")
      expect(midway.payouts.map((p) => p.status)).toEqual(["SUCCESS", "PENDING"])
      expect(yield* balances(id)).toEqual({ available: 8790n, held: 40000n })
      const leaseEnd = T0 + HOLD + Duration.toMillis(Split.executionLease)
      expect(yield* repo.findDue(at(leaseEnd - 1), 10)).toEqual([])
      expect((yield* repo.findDue(at(leaseEnd), 10)).map((s) => s.split_payment_id)).toEqual([id])

      yield* (yield* SandboxBank.SandboxBank).clearFailures(b)
      expect((yield* runDue).splits.sent).toBe(0)
      yield* TestClock.adjust(Split.executionLease)
      expect(yield* runConcurrently(3)).toEqual({ finished: 1, sent: 1, payouts_failed: 0, failed: 0 })
      expect((yield* read(id)).payout_status).toBe("SUCCESS")
      expect(yield* sent).toHaveLength(2)
      expect(yield* balances(id)).toEqual({ available: 8790n, held: 0n })
      expect(yield* resultEvents).toHaveLength(1)
      yield* expectLedgerOk
    })
  }
]
