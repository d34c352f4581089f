/**
 * Who the sandbox bank knows: its own open accounts (with their aliases and, when opened with
 * one, their holders) and the external accounts a test or a tester registered. Pure functions
 * over the part of the bank's state that names accounts.
 */
import { HashMap, Option } from "effect"
import { BankAccount, BankProvider } from "@cobro/core"

export interface HolderState {
  /**
   * Open accounts and their aliases. A closed CVU is forgotten: CVUs are drawn from 10¹³ at
   * random, so one is reissued with a chance of one in 10¹³ ÷ (CVUs closed since the start).
   *
   * `open`, `aliases` and `ownHolders` are mutable maps, changed in place by the last step of a
   * change of the bank's state (under its lock, after every check that may refuse it): copying
   * a persistent map of every open account on each account opened made the sandbox bank a
   * tenth of a payment creation's CPU, most of it garbage.
   */
  readonly open: Map<BankAccount.Cvu, BankAccount.Alias>
  /** Aliases held by open accounts. */
  readonly aliases: Map<string, BankAccount.Cvu>
  /** External holders, keyed by account and by alias. */
  readonly holders: HashMap.HashMap<string, BankProvider.AccountHolder>
  /** The holders of open accounts opened with one (`openAccount`'s `holder`), by CVU and by alias. */
  readonly ownHolders: Map<string, BankProvider.AccountHolder>
}

export interface ExternalHolder {
  /** CVU or CBU of the external account. */
  readonly account: string
  readonly alias?: string | undefined
  readonly cuit: BankAccount.Cuit
  readonly name: string
}

/** An alias is taken while an open account or a registered external holder uses it. */
export const aliasTaken = (state: HolderState, alias: string): boolean =>
  state.aliases.has(alias) || HashMap.has(state.holders, alias)

/** Whether `address` (CVU, CBU or alias) names an account this bank knows: its own or registered. */
export const known = (state: HolderState, address: string): boolean =>
  state.open.has(address as BankAccount.Cvu) || aliasTaken(state, address)

/** The account an address names: itself for a CVU/CBU, the registered account for an alias. */
export const resolve = (state: HolderState, address: string): string =>
  BankAccount.isValidCbu(address)
    ? address
    : Option.match(HashMap.get(state.holders, address), {
        onNone: () => address,
        onSome: (holder) => holder.account
      })

/** The holder `lookupHolder` answers for a CVU, CBU or alias, if any. */
export const lookup = (state: HolderState, address: string): Option.Option<BankProvider.AccountHolder> =>
  BankAccount.isValidCbu(address) || BankAccount.isValidAlias(address)
    ? Option.orElse(HashMap.get(state.holders, address), () =>
        Option.fromNullable(state.ownHolders.get(address))
      )
    : Option.none()

/** `state` with `holder` registered (by account and, when given, alias); replaces an earlier one. */
export const register = <S extends HolderState>(state: S, holder: ExternalHolder): S => {
  const record = new BankProvider.AccountHolder({
    account: holder.account,
    cuit: holder.cuit,
    name: holder.name
  })
  const byAccount = HashMap.set(state.holders, holder.account, record)
  return {
    ...state,
    holders: holder.alias === undefined ? byAccount : HashMap.set(byAccount, holder.alias, record)
  }
}

/** `state` without the registered holder of `account` (and its alias); unknown: unchanged. */
export const forget = <S extends HolderState>(state: S, account: string): S => {
  if (!HashMap.has(state.holders, account)) return state
  const holders = HashMap.filter(state.holders, (holder) => holder.account !== account)
  return { ...state, holders }
}

/** Why `registerHolder` cannot take `holder` (a caller's bug), if so. */
export const invalid = (holder: ExternalHolder): Option.Option<string> =>
  !BankAccount.isValidCbu(holder.account)
    ? Option.some(`registerHolder: ${holder.account} is not a valid CVU/CBU`)
    : holder.alias !== undefined && !BankAccount.isValidAlias(holder.alias)
      ? Option.some(`registerHolder: ${holder.alias} is not a valid alias`)
      : Option.none()
