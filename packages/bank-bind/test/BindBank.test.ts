/**
 * The adapter against the simulator over real HTTP: every operation of the port as BIND documents
 * it, the token's renewal before expiry and after a 401, a transfer applied whose answer never
 * arrived (the retry with the same origin_id sends once), every documented status of a transfer
 * out, each documented alias refusal as its own reason, the statement's paging and its entries
 * that cannot be booked, confirming a notified transfer, "Conciliar transferencia", the balance,
 * an unknown holder and answers that are not JSON (`unavailable`, never a defect).
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { FetchHttpClient } from "@effect/platform"
import { BankAccount, BankProvider, Ids, Money } from "@cobro/core"
import { DateTime, Duration, Effect, Layer, Option, Redacted } from "effect"
import { BindBank, OriginId } from "../src/index.js"
import * as Api from "../src/internal/api.js"
import type { BindSettings } from "../src/BindConfig.js"
import { BindSimulator } from "../src/testing.js"

const settingsFor = (sim: BindSimulator.Simulator, overrides: Partial<BindSettings> = {}): BindSettings => ({
  baseUrl: sim.url,
  tokenUrl: sim.tokenUrl,
  clientId: sim.clientId,
  clientSecret: Redacted.make(sim.clientSecret),
  scope: sim.scope,
  cuit: sim.entity.cuit,
  name: Option.some(sim.entity.name),
  confirmWindow: Duration.days(7),
  mtls: Option.none(),
  timeout: Duration.millis(500),
  refreshBefore: Duration.minutes(5),
  retries: 3,
  retryBase: Duration.millis(10),
  webhookSecret: Option.none(),
  webhookSecretHeader: "x-bind-webhook-secret",
  ...overrides
})

/** Runs `f` with a fresh simulator and the adapter pointed at it. */
const withBank = <A, E>(
  f: (
    bank: BankProvider.BankProvider["Type"],
    bind: BindBank.BindBank["Type"],
    sim: BindSimulator.Simulator
  ) => Effect.Effect<A, E>,
  overrides: Partial<BindSettings> = {}
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sim = yield* BindSimulator.scoped()
      const layer = BindBank.layer(settingsFor(sim, overrides)).pipe(Layer.provide(FetchHttpClient.layer))
      return yield* Effect.provide(
        Effect.flatMap(Effect.all([BankProvider.BankProvider, BindBank.BindBank]), ([bank, bind]) =>
          f(bank, bind, sim)
        ),
        layer
      )
    })
  )

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")

const ars = (minor: bigint) => Money.make(minor, "ARS")
const alias = (s: string) => BankAccount.Alias.make(s)
const seller = {
  cuit: "20123456786",
  name: "Ana Gómez",
  cbu: BankAccount.makeCbu("0170099", "2200000123456"),
  alias: "ana.gomez.cbu"
}

describe("BindBank over the simulator", () => {
  it.live(
    "opens a CVU (with the alias asked for, else one of its digits), changes it after 24 hours and releases it",
    () =>
      withBank((bank, _, sim) =>
        Effect.gen(function* () {
          const plain = yield* bank.openAccount({})
          expect(BankAccount.isValidCvu(plain.cvu)).toBe(true)
          expect(plain.alias).toBe(`cobro.${plain.cvu.slice(8, 21)}`)
          expect(sim.cvus.get(plain.cvu)).toMatchObject({ alias: plain.alias, name: sim.entity.name })
          const named = yield* bank.openAccount({ alias: alias("tienda.cobro") })
          expect(sim.cvus.get(named.cvu)?.alias).toBe("tienda.cobro")
          // BIND allows one alias assignment every 24 hours.
          const soon = yield* Effect.flip(bank.changeAlias(named.cvu, alias("tienda.nueva")))
          expect(soon.reason).toBe("alias_change_refused")
          sim.passTime(86_400_000)
          const changed = yield* bank.changeAlias(named.cvu, alias("tienda.nueva"))
          expect(changed.alias).toBe("tienda.nueva")
          expect(sim.cvus.get(named.cvu)?.alias).toBe("tienda.nueva")
          yield* bank.releaseAccount(named.cvu)
          yield* bank.releaseAccount(named.cvu) // twice is not an error
          expect(sim.cvus.get(named.cvu)?.open).toBe(false)
        })
      )
  )

  it.live(
    "each documented alias refusal is its own reason: in use, bad format, changed too recently; no CVU stays open",
    () =>
      withBank((bank, _, sim) =>
        Effect.gen(function* () {
          const first = yield* bank.openAccount({ alias: alias("ocupado.ya") })
          const taken = yield* Effect.flip(bank.openAccount({ alias: alias("ocupado.ya") }))
          expect(taken.reason).toBe("alias_taken")
          expect([...sim.cvus.values()].filter((c) => c.open)).toHaveLength(1)
          // A format BIND refuses (core's schema would refuse it first; cast past it).
          const bad = yield* Effect.flip(bank.openAccount({ alias: "Con Espacios" as BankAccount.Alias }))
          expect(bad.reason).toBe("alias_invalid")
          expect([...sim.cvus.values()].filter((c) => c.open)).toHaveLength(1)
          sim.passTime(86_400_000)
          const other = yield* bank.openAccount({})
          expect((yield* Effect.flip(bank.changeAlias(other.cvu, alias("ocupado.ya")))).reason).toBe(
            "alias_taken"
          )
          sim.faults.refuseAliasChange.add(first.cvu)
          expect((yield* Effect.flip(bank.changeAlias(first.cvu, alias("otro.alias")))).reason).toBe(
            "alias_change_refused"
          )
        })
      )
  )

  it.live(
    "a CVU is opened in the entity's CUIT with the merchant's name: lookups answer that name and the entity's CUIT",
    () =>
      withBank((bank, _, sim) =>
        Effect.gen(function* () {
          const opened = yield* bank.openAccount({
            alias: alias("tienda.holder"),
            holder: { cuit: BankAccount.Cuit.make(seller.cuit), name: seller.name }
          })
          expect(sim.cvus.get(opened.cvu)?.name).toBe(seller.name)
          const shown = { account: opened.cvu, cuit: sim.entity.cuit, name: seller.name }
          expect(yield* bank.lookupHolder(opened.cvu)).toMatchObject(shown)
          expect(yield* bank.lookupHolder("tienda.holder")).toMatchObject(shown)
          yield* bank.releaseAccount(opened.cvu)
          expect((yield* Effect.flip(bank.lookupHolder(opened.cvu))).reason).toBe("holder_not_found")
        })
      )
  )

  it.live("looks up a holder by CBU or alias; an unknown one is holder_not_found", () =>
    withBank((bank, _, sim) =>
      Effect.gen(function* () {
        sim.addHolder(seller)
        const byAlias = yield* bank.lookupHolder(seller.alias)
        expect(byAlias).toMatchObject({ account: seller.cbu, cuit: seller.cuit, name: seller.name })
        expect((yield* bank.lookupHolder(seller.cbu)).cuit).toBe(seller.cuit)
        expect((yield* Effect.flip(bank.lookupHolder("nadie.aca"))).reason).toBe("holder_not_found")
      })
    )
  )

  it.live("sends a transfer once per reference, and its status is found by the reference", () =>
    withBank((bank, bind, sim) =>
      Effect.gen(function* () {
        const sent = yield* bank.sendTransfer({ to: seller.cbu, amount: ars(150_050n), reference: "po_0001" })
        const again = yield* bank.sendTransfer({
          to: seller.cbu,
          amount: ars(150_050n),
          reference: "po_0001"
        })
        expect(again.bank_transaction_id).toBe(sent.bank_transaction_id)
        expect(sim.transfers.size).toBe(1)
        const entry = sim.transfers.get(OriginId.forReference("po_0001"))
        expect(entry?.amount).toBe(1500.5)
        expect(yield* bind.transferStatus("po_0001")).toEqual({
          _tag: "Sent",
          bank_transaction_id: sent.bank_transaction_id,
          status: "COMPLETED"
        })
        expect(yield* bind.transferStatus("po_never")).toEqual({ _tag: "Unknown" })
        // By BIND's id (an outgoing event's `data.id`): its status and the origin_id it was sent with.
        expect(yield* bind.outgoing(sent.bank_transaction_id)).toEqual(
          Option.some({
            _tag: "Sent",
            bank_transaction_id: sent.bank_transaction_id,
            status: "COMPLETED",
            origin_id: Option.some(OriginId.forReference("po_0001"))
          })
        )
        expect(yield* bind.outgoing("1-30717449076-000000092637177-1")).toEqual(Option.none())
        // Another amount under the same reference is never taken for ours.
        const clash = yield* Effect.flip(
          bank.sendTransfer({ to: seller.cbu, amount: ars(1n), reference: "po_0001" })
        )
        expect(clash.reason).toBe("rejected")
      })
    )
  )

  it.live("a transfer applied whose answer never came is retried with the same origin_id and sent once", () =>
    withBank((bank, _, sim) =>
      Effect.gen(function* () {
        sim.faults.dropTransferAnswers = 1
        const sent = yield* bank.sendTransfer({
          to: seller.alias,
          amount: ars(10_000n),
          reference: "po_timeout"
        })
        expect(sim.stats.transferRequests).toBe(2)
        expect(sim.transfers.size).toBe(1)
        expect(sent.bank_transaction_id).toBe(sim.transfers.get(OriginId.forReference("po_timeout"))?.id)
      })
    )
  )

  it.live("a transfer pending at BIND that fails late shows as Failed; a 5xx is retried", () =>
    withBank((bank, bind, sim) =>
      Effect.gen(function* () {
        sim.faults.holdTransfers = true
        sim.faults.serverErrors = 2
        const sent = yield* bank.sendTransfer({ to: seller.cbu, amount: ars(5_000n), reference: "po_late" })
        expect((yield* bind.transferStatus("po_late"))._tag).toBe("Pending")
        sim.settle(OriginId.forReference("po_late"), "FAILED")
        expect(yield* bind.transferStatus("po_late")).toEqual({
          _tag: "Failed",
          bank_transaction_id: sent.bank_transaction_id,
          status: "FAILED"
        })
      })
    )
  )

  it.live(
    "the port's transfer in flight: acceptance, status by reference, late failure, timeout, duplicate",
    () =>
      withBank(
        (bank, _, sim) =>
          Effect.gen(function* () {
            // Completed at once.
            const done = yield* bank.sendTransfer({
              to: seller.cbu,
              amount: ars(1_000n),
              reference: "po_now"
            })
            expect(done.status).toBe("completed")
            expect(yield* bank.transferStatus("po_now")).toEqual({
              _tag: "Completed",
              bank_transaction_id: done.bank_transaction_id
            })
            // Accepted and pending, then failed late: the status query says so, with BIND's code.
            sim.faults.holdTransfers = true
            const held = yield* bank.sendTransfer({
              to: seller.cbu,
              amount: ars(2_000n),
              reference: "po_held"
            })
            expect(held.status).toBe("pending")
            expect(yield* bank.transferStatus("po_held")).toEqual({
              _tag: "Pending",
              bank_transaction_id: held.bank_transaction_id
            })
            sim.settle(OriginId.forReference("po_held"), "FAILED")
            const failed = yield* bank.transferStatus("po_held")
            expect(failed._tag).toBe("Failed")
            expect(failed._tag === "Failed" && failed.reason).toContain("FAILED")
            // A reference BIND never received: NotFound, so resending is safe.
            expect(yield* bank.transferStatus("po_never")).toEqual({ _tag: "NotFound" })
            // Applied, then every answer lost: the outcome is unknown, never a refusal...
            sim.faults.holdTransfers = false
            sim.faults.dropTransferAnswers = 10
            const lost = yield* Effect.flip(
              bank.sendTransfer({ to: seller.cbu, amount: ars(3_000n), reference: "po_lost" })
            )
            expect(lost.reason).toBe("unavailable")
            sim.faults.dropTransferAnswers = 0
            // ...and the status query finds it applied; a duplicate send answers the same transfer.
            const found = yield* bank.transferStatus("po_lost")
            expect(found._tag).toBe("Completed")
            const again = yield* bank.sendTransfer({
              to: seller.cbu,
              amount: ars(3_000n),
              reference: "po_lost"
            })
            expect(found._tag === "Completed" && found.bank_transaction_id).toBe(again.bank_transaction_id)
            expect(
              [...sim.transfers.values()].filter((t) => t.origin_id === OriginId.forReference("po_lost"))
            ).toHaveLength(1)
            expect(sim.transfers.size).toBe(3)
          }),
        { timeout: Duration.millis(200), retries: 1 }
      )
  )

  it.live("returns a received transfer to its sender, once per transfer id", () =>
    withBank((bank, bind, sim) =>
      Effect.gen(function* () {
        const incoming = new BankProvider.IncomingTransfer({
          bank_transaction_id: Ids.BankTransactionId.make("coelsa-77"),
          cvu: BankAccount.makeCvu("0000322", "0000000000099"),
          amount: ars(2_500n),
          sender_cuit: BankAccount.Cuit.make(seller.cuit),
          sender_name: seller.name,
          sender_account: seller.cbu
        })
        yield* bank.returnTransfer(incoming)
        yield* bank.returnTransfer(incoming)
        expect(sim.transfers.size).toBe(1)
        expect(sim.transfers.get(OriginId.forReturn("coelsa-77"))).toMatchObject({
          to: { cbu: seller.cbu },
          amount: 25
        })
        expect((yield* bind.returnStatus("coelsa-77"))._tag).toBe("Sent")
      })
    )
  )

  it.live("renews the token before it expires, without a 401", () =>
    withBank(
      (bank, _, sim) =>
        Effect.gen(function* () {
          sim.addHolder(seller)
          sim.faults.tokenLifetimeSeconds = 1
          yield* bank.lookupHolder(seller.cbu)
          yield* bank.lookupHolder(seller.cbu)
          expect(sim.stats.logins).toBe(1)
          yield* Effect.sleep("1100 millis")
          yield* bank.lookupHolder(seller.cbu)
          expect(sim.stats.logins).toBe(2)
          expect(sim.stats.unauthorized).toBe(0)
        }),
      { refreshBefore: Duration.millis(500) }
    )
  )

  it.live("logs in again once after a 401, even for a call that is never retried", () =>
    withBank((bank, _, sim) =>
      Effect.gen(function* () {
        yield* bank.openAccount({})
        sim.revokeTokens()
        yield* bank.openAccount({ alias: alias("tras.el.401") })
        expect(sim.stats.unauthorized).toBe(1)
        expect(sim.stats.logins).toBe(2)
        expect([...sim.cvus.values()]).toHaveLength(2)
      })
    )
  )

  it.live("wrong credentials and answers that are not JSON are unavailable, never defects", () =>
    Effect.gen(function* () {
      const badLogin = yield* withBank((bank) => Effect.flip(bank.lookupHolder(seller.cbu)), {
        clientSecret: Redacted.make("wrong"),
        retries: 0
      })
      expect(badLogin.reason).toBe("unavailable")
      expect(badLogin.message).not.toContain("wrong")
      const malformed = yield* withBank((bank, _, sim) => {
        sim.faults.malformedAnswers = 10
        return Effect.flip(bank.lookupHolder(seller.cbu))
      })
      expect(malformed.reason).toBe("unavailable")
      const opening = yield* withBank((bank, _, sim) => {
        sim.faults.malformedAnswers = 1
        return Effect.flip(bank.openAccount({}))
      })
      expect(opening.reason).toBe("unavailable")
    })
  )

  it.live("the settings read from COBRO_BIND_* keep the secret redacted", () =>
    Effect.gen(function* () {
      const { ConfigProvider } = yield* Effect.promise(() => import("effect"))
      const settings = yield* Effect.withConfigProvider(
        (yield* Effect.promise(() => import("../src/BindConfig.js"))).config,
        ConfigProvider.fromMap(
          new Map([
            ["COBRO_BIND_ENVIRONMENT", "production"],
            ["COBRO_BIND_CLIENT_ID", "id"],
            ["COBRO_BIND_CLIENT_SECRET", "s3cret"],
            ["COBRO_BIND_CUIT", "30716595540"]
          ])
        )
      )
      expect(String(settings.clientSecret)).not.toContain("s3cret")
      // BIND's documented production gateway, token endpoint and scope.
      expect(settings).toMatchObject({
        baseUrl: "https://api.bindpagos.com.ar",
        tokenUrl: "https://login.microsoftonline.com/3ee81fb8-f2e8-4475-aef2-c5902f9fb0c3/oauth2/v2.0/token",
        scope: "api://bindpagos.com.ar/.default"
      })
      expect(Duration.toMillis(settings.timeout)).toBe(10_000)
      expect(settings.retries).toBe(3)
    })
  )

  it.live("reads the statement of transfers in for a window, page by page, over the simulator", () =>
    withBank(
      (bank, _, sim) =>
        Effect.gen(function* () {
          const cvu = BankAccount.makeCvu("0000322", "0000000000001")
          const before = yield* DateTime.now
          yield* Effect.sleep("5 millis")
          // 150 transfers in (three pages of 50), none notified (no webhook set).
          for (let n = 1; n <= 150; n++) {
            const sent = yield* Effect.promise(() =>
              sim.receive({
                cvu,
                amount: n,
                sender: { cuit: seller.cuit, name: seller.name, cbu: seller.cbu }
              })
            )
            expect(sent.status).toBe("none")
          }
          yield* Effect.sleep("5 millis")
          const after = yield* DateTime.now
          const listed = (yield* bank.incomingTransfers({ from: before, to: after })).transfers
          expect(listed).toHaveLength(150)
          expect(listed.map((t) => Number(t.amount.minor / 100n))).toEqual(
            Array.from({ length: 150 }, (_, i) => i + 1)
          )
          expect(listed[0]).toMatchObject({ cvu, sender_cuit: seller.cuit, sender_account: seller.cbu })
          // Nothing outside the window (the list's dates have minutes).
          const later = DateTime.addDuration(after, Duration.minutes(2))
          expect(
            (yield* bank.incomingTransfers({
              from: later,
              to: DateTime.addDuration(later, Duration.minutes(1))
            })).transfers
          ).toEqual([])
          // A statement answered too slowly is `unavailable` (the caller retries the window later).
          sim.faults.slowAnswersMillis = 700
          const slow = yield* Effect.flip(bank.incomingTransfers({ from: before, to: after }))
          expect(slow.reason).toBe("unavailable")
        }),
      { retries: 0 }
    )
  )

  it.live("every documented status of a transfer out settles as decided", () =>
    withBank((bank, _, sim) =>
      Effect.gen(function* () {
        sim.faults.holdTransfers = true
        const expected: Record<string, string> = {
          PENDING: "Pending",
          IN_PROGRESS: "Pending",
          UNKNOWN: "Pending", // BIND resolves it during the day: still in flight
          UNKNOWN_FOREVER: "Pending", // manual handling at BIND: in flight until COMPLETED or FAILED
          COMPLETED: "Completed",
          FAILED: "Failed"
        }
        for (const status of Api.transferStatuses) {
          const reference = `po_${status}`
          const sent = yield* bank.sendTransfer({ to: seller.cbu, amount: ars(1_000n), reference })
          expect(sent.status).toBe("pending")
          sim.settle(OriginId.forReference(reference), status)
          const seen = yield* bank.transferStatus(reference)
          expect([status, seen._tag]).toEqual([status, expected[status]])
        }
        // UNKNOWN_FOREVER turned COMPLETED by BIND's manual handling settles it.
        sim.settle(OriginId.forReference("po_UNKNOWN_FOREVER"), "COMPLETED")
        expect((yield* bank.transferStatus("po_UNKNOWN_FOREVER"))._tag).toBe("Completed")
        // An origin_id longer than BIND's 15 characters is refused (422), never sent.
        expect(OriginId.forReference("x".repeat(200)).length).toBeLessThanOrEqual(Api.ORIGIN_ID_MAX)
      })
    )
  )

  it.live("confirms a notified transfer with BIND's list: known, unknown, or not as claimed", () =>
    withBank((bank, bind, sim) =>
      Effect.gen(function* () {
        const { cvu } = yield* bank.openAccount({})
        const sent = yield* Effect.promise(() =>
          sim.receive({
            cvu,
            amount: 1500.5,
            sender: { cuit: seller.cuit, name: seller.name, cbu: seller.cbu }
          })
        )
        const claim = new BankProvider.IncomingTransfer({
          bank_transaction_id: Ids.BankTransactionId.make(sent.id),
          cvu,
          amount: ars(150_050n),
          sender_cuit: BankAccount.Cuit.make(seller.cuit),
          sender_name: "whoever the body says",
          sender_account: seller.cbu
        })
        const confirmed = yield* bind.confirmIncoming(claim)
        expect(confirmed._tag).toBe("Confirmed")
        expect(confirmed._tag === "Confirmed" && confirmed.transfer.sender_name).toBe(seller.name)
        const unknown = new BankProvider.IncomingTransfer({
          ...claim,
          bank_transaction_id: Ids.BankTransactionId.make("MADEUP")
        })
        expect((yield* bind.confirmIncoming(unknown))._tag).toBe("Unknown")
        const more = yield* bind.confirmIncoming(
          new BankProvider.IncomingTransfer({ ...claim, amount: ars(5_000_000n) })
        )
        expect(more._tag === "Mismatch" && more.reason).toContain("amount")
        const other = BankAccount.makeCvu("0000322", "0000000000777")
        const elsewhere = yield* bind.confirmIncoming(
          new BankProvider.IncomingTransfer({ ...claim, cvu: other })
        )
        expect(elsewhere._tag === "Mismatch" && elsewhere.reason).toContain("CVU")
      })
    )
  )

  it.live("Conciliar transferencia: a transfer whose event never went out is notified; the balance", () =>
    withBank((bank, bind, sim) =>
      Effect.gen(function* () {
        const { cvu } = yield* bank.openAccount({})
        const sender = { cuit: seller.cuit, name: seller.name, cbu: seller.cbu }
        sim.faults.dropNotifications = 1
        const lost = yield* Effect.promise(() => sim.receive({ cvu, amount: 100, sender }))
        const told = yield* Effect.promise(() => sim.receive({ cvu, amount: 50, sender }))
        const answer = yield* bind.conciliate([lost.id, told.id, "NOSUCHID"])
        expect(answer).toEqual({ conciliadas: [lost.id], noConciliadas: [told.id], conError: ["NOSUCHID"] })
        expect(sim.incoming.every((e) => e.notified)).toBe(true)
        yield* bank.sendTransfer({ to: seller.cbu, amount: ars(2_000n), reference: "po_out" })
        expect(Money.format(yield* bind.balance)).toBe("130.00")
      })
    )
  )

  it.live(
    "statement entries that cannot be booked are unreadable, named; the rest of the window is read",
    () =>
      withBank((bank, _, sim) =>
        Effect.gen(function* () {
          const { cvu } = yield* bank.openAccount({})
          const before = yield* DateTime.now
          const sender = { cuit: seller.cuit, name: seller.name, cbu: seller.cbu }
          yield* Effect.promise(() => sim.receive({ cvu, amount: 10, sender }))
          // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the page's example, read as loose JSON
          const doc = JSON.parse(fixture("transfer.cvu.received.json")) as { data: Record<string, any> }
          const huge = {
            ...doc.data,
            id: "HUGE1",
            status: "TRANSFERENCIAS_RECIBIDAS",
            details: { origin_credit: { cvu } },
            charge: { summary: "VAR", value: { currency: "ARS", amount: 1e17 } }
          }
          sim.bookRaw(huge)
          // A sender CBU with a bad check digit: BIND's word for who paid; the money is still ours to book.
          const badCbu = {
            ...huge,
            id: "BADCBU1",
            charge: { value: { currency: "ARS", amount: 20 } },
            counterparty: {
              ...doc.data["counterparty"],
              account_routing: { scheme: "CBU", address: "0170099222000001234560" }
            }
          }
          sim.bookRaw(badCbu)
          yield* Effect.promise(() => sim.receive({ cvu, amount: 30, sender }))
          const after = DateTime.addDuration(yield* DateTime.now, Duration.seconds(1))
          const statement = yield* bank.incomingTransfers({ from: before, to: after })
          expect(statement.transfers.map((t) => Money.format(t.amount))).toEqual(["10.00", "20.00", "30.00"])
          expect(statement.unreadable).toEqual([
            expect.objectContaining({
              bank_transaction_id: "HUGE1",
              reason: expect.stringContaining("entry.charge.value.amount")
            })
          ])
          expect(JSON.parse(statement.unreadable[0]!.body)).toMatchObject({ id: "HUGE1" })
        })
      )
  )
})
