/**
 * BIND's account operations behind the `BankProvider` port: Crear CVU with its alias, Asignar
 * alias, Eliminar CVU and Wallet's holder look-up. Opening a CVU and assigning an alias are never
 * retried (a repeat could open a second CVU or race another holder); release and look-up are.
 */
import { BankAccount, BankProvider } from "@cobro/core"
import { Effect, Option, Random } from "effect"
import type { BindSettings } from "../BindConfig.js"
import { ok, reported } from "./answers.js"
import * as Api from "./api.js"
import { type Answer, bankError, type Client, decode, statusError } from "./client.js"

type BankError = BankProvider.BankError

/**
 * The documented refusals of an alias (422, told apart by their words: "ya se encuentra en uso",
 * "formato … incorrecto", "más de una vez en 24 horas"); another refusal is `rejected`.
 */
export const aliasRefusal = (alias: string, answer: Answer): BankError => {
  const text = answer.body.toLowerCase()
  if (answer.status === 422 || answer.status === 409 || answer.status === 400) {
    if (text.includes("en uso")) return bankError("alias_taken", `alias ${alias} is already in use`)
    if (text.includes("formato"))
      return bankError("alias_invalid", `BIND refuses the format of alias ${alias}`)
    if (text.includes("24 horas") || text.includes("24hs"))
      return bankError(
        "alias_change_refused",
        `BIND allows one alias change every 24 hours; alias ${alias} was not assigned`
      )
  }
  return statusError("alias assignment", answer)
}

/** The account operations on `client`, in the entity's CUIT of `settings`. */
export const accounts = ({ request }: Client, settings: BindSettings) => {
  /** Asignar alias; each documented refusal its own reason. Never retried. */
  const assignAlias = (cvu: BankAccount.Cvu, alias: BankAccount.Alias) =>
    request({
      method: "POST",
      path: Api.paths.alias,
      body: { cuit: settings.cuit, cvu, label: alias } satisfies typeof Api.AliasRequest.Encoded,
      idempotent: false,
      what: "alias assignment"
    }).pipe(
      Effect.flatMap((answer): Effect.Effect<void, BankError> =>
        ok(answer) ? Effect.void : Effect.fail(aliasRefusal(alias, answer))
      )
    )

  /** Eliminar CVU; one BIND does not know (404) is already released. */
  const releaseAccount = (cvu: BankAccount.Cvu) =>
    request({
      method: "DELETE",
      path: Api.paths.deleteCvu(cvu, settings.cuit),
      idempotent: true,
      what: "CVU release"
    }).pipe(
      Effect.flatMap((answer) =>
        ok(answer) || answer.status === 404 ? Effect.void : Effect.fail(statusError("CVU release", answer))
      )
    )

  /**
   * Crear CVU in the entity's CUIT with the holder name the payer's bank shows (the merchant's),
   * then its alias: the one asked for, else `cobro.` and the CVU's account digits (BIND creates
   * CVUs without one). A CVU that does not get its alias is released again.
   */
  const openAccount = ({
    alias,
    holder
  }: {
    readonly alias?: BankAccount.Alias | undefined
    readonly holder?: { readonly name: string } | undefined
  }) =>
    Effect.gen(function* () {
      const name = holder?.name ?? Option.getOrUndefined(settings.name)
      if (name === undefined)
        return yield* Effect.fail(
          bankError("rejected", "a CVU needs a holder name: the merchant's, or COBRO_BIND_NAME")
        )
      // Ours, unique per CVU: 18 random digits (BIND reactivates a CVU created again with the same).
      const client_id = (yield* Effect.all(Array.from({ length: 18 }, () => Random.nextIntBetween(0, 10))))
        .join("")
        .replace(/^0/, "1")
      const answer = yield* request({
        method: "POST",
        path: Api.paths.createCvu,
        body: { client_id, cuit: settings.cuit, name: name.slice(0, 100) },
        idempotent: false,
        what: "CVU opening"
      })
      if (!ok(answer)) return yield* Effect.fail(statusError("CVU opening", answer))
      const created = yield* decode(Api.CreateCvuResponse, "CVU opening")(answer)
      const cvu = yield* reported(BankAccount.Cvu, created.cvu, "CVU")
      if (created.reactivated === true)
        yield* Effect.logWarning("BIND reactivated a released CVU").pipe(Effect.annotateLogs({ cvu }))
      const given = created.label ?? ""
      if (alias === undefined && BankAccount.isValidAlias(given))
        return new BankProvider.BankAccountRef({ cvu, alias: BankAccount.Alias.make(given) })
      const wanted = alias ?? BankAccount.Alias.make(`cobro.${cvu.slice(8, 21)}`)
      yield* assignAlias(cvu, wanted).pipe(Effect.tapError(() => Effect.ignore(releaseAccount(cvu))))
      return new BankProvider.BankAccountRef({ cvu, alias: wanted })
    })

  const changeAlias = (cvu: BankAccount.Cvu, alias: BankAccount.Alias) =>
    Effect.as(assignAlias(cvu, alias), new BankProvider.BankAccountRef({ cvu, alias }))

  /** Wallet's "Consultar cuenta x CBU/CVU/alias": 404 (bad CBU/CVU) and 422 (no such alias) are unknown. */
  const lookupHolder = (address: string) =>
    Effect.gen(function* () {
      const byNumber = /^\d{22}$/.test(address)
      const answer = yield* request({
        method: "GET",
        path: Api.paths.account,
        urlParams: byNumber ? { cbuOrCvu: address } : { alias: address },
        idempotent: true,
        what: "holder lookup"
      })
      if (answer.status === 404 || answer.status === 422)
        return yield* Effect.fail(
          bankError("holder_not_found", `BIND knows no account holder for ${address}`)
        )
      if (!ok(answer)) return yield* Effect.fail(statusError("holder lookup", answer))
      const account = yield* decode(Api.AccountResponse, "holder lookup")(answer)
      if (account.activo === false)
        return yield* Effect.fail(bankError("holder_not_found", `the account ${address} is not active`))
      const cuit = yield* reported(BankAccount.Cuit, account.cuitCuil, "CUIT")
      return new BankProvider.AccountHolder({
        account: account.cbucvu,
        cuit,
        name: account.nombreCvu ?? account.nombre ?? ""
      })
    })

  return { openAccount, changeAlias, releaseAccount, lookupHolder }
}
