/**
 * A database knows what it is: the mode and the bank of its first start are recorded in it
 * (`SqlDatabaseMode`), and a server or a command configured otherwise refuses to open it before it
 * migrates or writes anything. A production database never meets the sandbox: its demo merchant,
 * its public key, its bank, its clocks.
 *
 * A database from before the record is judged by what it holds (`decide`): it is
 * recorded as the configuration says only when its contents agree; otherwise it is refused, and
 * `cobro database record` says what it is (docs/decisions/0058-database-mode-and-bank.md).
 */
import { SqlDatabaseMode } from "@cobro/sql"
import { DateTime, Option } from "effect"
import { type Bank, type Mode, variables } from "./ServerConfig.js"

/** The mode and the bank a server or a command is configured with. */
export interface Wanted {
  readonly mode: Mode
  readonly bank: Bank
}

export type Decision =
  /** Recorded, and as configured. */
  | { readonly _tag: "Open" }
  /** Not recorded: record the configuration (`recordedBy`: how it was told). */
  | { readonly _tag: "Record"; readonly recordedBy: string }
  /** Not to be opened with this configuration: why, and what to do. */
  | { readonly _tag: "Refuse"; readonly reason: string }

/** How `recorded_by` reads when a database records its mode at its first start. */
export const firstStart = "first start"

/** How `recorded_by` reads when an operator recorded it (`cobro database record`). */
export const byCommand = "cobro database record"

export const bankName = (bank: string): string =>
  bank === "sandbox" ? "the sandbox bank" : bank === "bind" ? "BIND" : bank

const describeWanted = (wanted: Wanted): string =>
  `this configuration is ${wanted.mode} mode on ${bankName(wanted.bank)} (${variables.mode}=${wanted.mode}, ${variables.bank}=${wanted.bank})`

const settings = (identity: SqlDatabaseMode.Identity) =>
  `${variables.mode}=${identity.mode} ${variables.bank}=${identity.bank}`

const recordCommand = "cobro database record --mode sandbox|production --bank sandbox|bind"

/** The record's mismatch with the configuration, or none. */
export const mismatch = (
  where: string,
  recorded: SqlDatabaseMode.Recorded,
  wanted: Wanted
): Option.Option<string> =>
  recorded.mode === wanted.mode && recorded.bank === wanted.bank
    ? Option.none()
    : Option.some(
        `${where} is a ${recorded.mode} database on ${bankName(recorded.bank)} (recorded ${DateTime.formatIso(recorded.recordedAt)}, ${recorded.recordedBy}), and ${describeWanted(wanted)}. Nothing was changed. To use this database, start with ${settings(recorded)} (and the settings that go with them); for a ${wanted.mode} database, set ${variables.database} to another one`
      )

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** What the evidence shows of a sandbox, in words; none when nothing does. */
const sandboxTraces = (evidence: SqlDatabaseMode.Evidence): Option.Option<string> => {
  const traces = [
    ...(evidence.movedTestClocks > 0
      ? [plural(evidence.movedTestClocks, "moved test clock", "moved test clocks")]
      : []),
    ...(evidence.sandboxBankAccounts > 0
      ? [plural(evidence.sandboxBankAccounts, "sandbox bank account", "sandbox bank accounts")]
      : [])
  ]
  return traces.length === 0 ? Option.none() : Option.some(traces.join(" and "))
}

/**
 * Whether a database may be opened with `wanted`: by its record when it has one (`mismatch`: only
 * in its own mode and on its own bank), or else by what it holds (`evidence`):
 * - nothing in it (no schema, or no merchant, partner or bank cursor): a first start, recorded;
 * - sandbox mode on the sandbox bank: recorded unless it was reconciled with a real bank;
 * - production on a real bank: recorded if it was reconciled with that bank and holds nothing only
 *   a sandbox makes (moved test clocks, sandbox bank accounts);
 * - anything else (sandbox mode on a real bank: a production database started without
 *   `COBRO_MODE` looks the same): refused, until `cobro database record` says what it is.
 */
export const decide = (
  where: string,
  wanted: Wanted,
  known: { readonly recorded: SqlDatabaseMode.Recorded } | { readonly evidence: SqlDatabaseMode.Evidence }
): Decision => {
  if ("recorded" in known)
    return Option.match(mismatch(where, known.recorded, wanted), {
      onNone: () => ({ _tag: "Open" }),
      onSome: (reason) => ({ _tag: "Refuse", reason })
    })
  const found = known.evidence
  if (!found.schema || (found.accounts === 0 && found.realBankAccounts.length === 0))
    return { _tag: "Record", recordedBy: firstStart }
  const reconciled = found.realBankAccounts.join(", ")
  const refuse = (why: string): Decision => ({
    _tag: "Refuse",
    reason: `${where} does not record its mode yet (it was created before cobro recorded it) and ${why}; ${describeWanted(wanted)}. Nothing was changed. Say what it is with \`${recordCommand}\` (same ${variables.database}), then start in that mode (docs/operations.md, "Upgrading: the database's mode")`
  })
  const traces = sandboxTraces(found)
  if (wanted.mode === "sandbox" && wanted.bank === "sandbox")
    return found.realBankAccounts.length === 0
      ? { _tag: "Record", recordedBy: "inferred: no real bank in its contents" }
      : refuse(
          `it was reconciled with a real bank's statement (${reconciled}): it looks like a production database`
        )
  const ofBank = found.realBankAccounts.filter((account) => account.startsWith(`${wanted.bank}:`))
  if (wanted.mode === "production" && wanted.bank !== "sandbox" && ofBank.length > 0 && Option.isNone(traces))
    return { _tag: "Record", recordedBy: `inferred: reconciled with ${ofBank.join(", ")}` }
  return refuse(
    Option.isSome(traces)
      ? `it holds what only a sandbox makes (${traces.value})`
      : found.realBankAccounts.length > 0
        ? `its contents do not tell whether it is a sandbox or a production database (reconciled with ${reconciled})`
        : "its contents do not tell whether it is a sandbox or a production database"
  )
}

/**
 * Whether an operator may record `wanted` on an unrecorded database holding `evidence`: not a
 * sandbox bank where a real bank's statement was reconciled, and not production on the sandbox
 * bank (it moves no money).
 */
export const recordProblem = (wanted: Wanted, evidence: SqlDatabaseMode.Evidence): Option.Option<string> =>
  wanted.mode === "production" && wanted.bank === "sandbox"
    ? Option.some("production runs on a real bank: the sandbox bank moves no money")
    : wanted.bank === "sandbox" && evidence.realBankAccounts.length > 0
      ? Option.some(
          `it was reconciled with a real bank's statement (${evidence.realBankAccounts.join(", ")}), not the sandbox bank's`
        )
      : Option.none()
