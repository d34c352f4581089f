/**
 * The adapter against the simulator over real HTTP: every operation of the port, the token's
 * renewal before expiry and after a 401, a transfer applied whose answer never arrived (the retry
 * with the same origin_id sends once), late failures seen through the status query, alias
 * refusals, an unknown holder and answers that are not JSON (`unavailable`, never a defect).
 */
import { describe, expect, it } from "@effect/vitest"
import { FetchHttpClient } from "@effect/platform"
import { BankAccount, BankProvider, Ids, Money } from "@cobro/core"
import { DateTime, Duration, Effect, Layer, Option, Redacted } from "effect"
import { BindBank, OriginId } from "../src/index.js"
import type { BindSettings } from "../src/BindConfig.js"
import { BindSimulator } from "../src/testing.js"

const settingsFor = (sim: BindSimulator.Simulator, overrides: Partial<BindSettings> = {}): BindSettings => ({
  baseUrl: sim.url,
  tokenUrl: sim.tokenUrl,
  clientId: sim.clientId,
  clientSecret: Redacted.make(sim.clientSecret),
  scope: "",
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

const ars = (minor: bigint) => Money.make(minor, "ARS")
const alias = (s: string) => BankAccount.Alias.make(s)
const seller = {
  cuit: "20123456786",
  name: "Ana Gómez",
  cbu: BankAccount.makeCbu("0170099", "2200000123456"),
  alias: "ana.gomez.cbu"
}

describe("BindBank over the simulator", () => {
  it.live("opens a CVU with the bank's alias or the one asked for, changes and releases it", () =>
    withBank((bank, _, sim) =>
      Effect.gen(function* () {
        const plain = yield* bank.openAccount({})
        expect(BankAccount.isValidCvu(plain.cvu)).toBe(true)
        expect(plain.alias).toBe(sim.cvus.get(plain.cvu)?.alias)
        const named = yield* bank.openAccount({ alias: alias("tienda.cobro") })
        expect(sim.cvus.get(named.cvu)?.alias).toBe("tienda.cobro")
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
    "a taken alias is alias_taken and leaves no CVU open; a refused change is alias_change_refused",
    () =>
      withBank((bank, _, sim) =>
        Effect.gen(function* () {
          const first = yield* bank.openAccount({ alias: alias("ocupado.ya") })
          const taken = yield* Effect.flip(bank.openAccount({ alias: alias("ocupado.ya") }))
          expect(taken.reason).toBe("alias_taken")
          expect([...sim.cvus.values()].filter((c) => c.open)).toHaveLength(1)
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
    "a CVU is opened in the collecting entity's name: the merchant given as holder is not sent, lookups answer the entity",
    () =>
      withBank((bank, _, sim) =>
        Effect.gen(function* () {
          const opened = yield* bank.openAccount({
            alias: alias("tienda.holder"),
            holder: { cuit: BankAccount.Cuit.make(seller.cuit), name: seller.name }
          })
          const entity = { cuit: "30716595540", name: "Cobro Simulado SA" }
          expect(yield* bank.lookupHolder(opened.cvu)).toMatchObject({ account: opened.cvu, ...entity })
          expect(yield* bank.lookupHolder("tienda.holder")).toMatchObject({ account: opened.cvu, ...entity })
          expect(sim.cvus.get(opened.cvu)?.open).toBe(true)
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
          bank_transaction_id: sent.bank_transaction_id
        })
        expect(yield* bind.transferStatus("po_never")).toEqual({ _tag: "Unknown" })
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
            ["COBRO_BIND_BASE_URL", "https://gw-staging-qrbind.epays.services"],
            ["COBRO_BIND_TOKEN_URL", "https://login.example/token"],
            ["COBRO_BIND_CLIENT_ID", "id"],
            ["COBRO_BIND_CLIENT_SECRET", "s3cret"]
          ])
        )
      )
      expect(String(settings.clientSecret)).not.toContain("s3cret")
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
          // 150 transfers in (two pages of 100), none notified (no webhook set).
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
          const listed = yield* bank.incomingTransfers({ from: before, to: after })
          expect(listed).toHaveLength(150)
          expect(listed.map((t) => Number(t.amount.minor / 100n))).toEqual(
            Array.from({ length: 150 }, (_, i) => i + 1)
          )
          expect(listed[0]).toMatchObject({ cvu, sender_cuit: seller.cuit, sender_account: seller.cbu })
          // Half-open: nothing before `from` or from `to` on.
          expect(
            yield* bank.incomingTransfers({
              from: after,
              to: DateTime.addDuration(after, Duration.seconds(1))
            })
          ).toEqual([])
          // A statement answered too slowly is `unavailable` (the caller retries the window later).
          sim.faults.slowAnswersMillis = 700
          const slow = yield* Effect.flip(bank.incomingTransfers({ from: before, to: after }))
          expect(slow.reason).toBe("unavailable")
        }),
      { retries: 0 }
    )
  )
})
