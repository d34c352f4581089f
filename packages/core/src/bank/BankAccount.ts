/**
 * Argentine bank identifiers: CBU/CVU (22-digit account keys), CUIT (11-digit tax id) and alias.
 * Validators take bare strings and never throw; the branded schemas wrap them with messages that
 * name the rule, so a decode error tells the caller what a valid value looks like.
 */
import { Cause, Option, Schema } from "effect"
import { Class } from "../internal/schemaClass.js"

const BLOCK1_WEIGHTS = [7, 1, 3, 9, 7, 1, 3] as const
const BLOCK2_WEIGHTS = [3, 9, 7, 1, 3, 9, 7, 1, 3, 9, 7, 1, 3] as const
const CUIT_WEIGHTS = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2] as const
const CUIT_PREFIXES: ReadonlySet<string> = new Set(["20", "23", "24", "27", "30", "33", "34"])

const weightedSum = (digits: string, weights: ReadonlyArray<number>): number => {
  let sum = 0
  for (let i = 0; i < weights.length; i++) sum += Number(digits[i]) * weights[i]!
  return sum
}

const isDigits = (s: string, length: number): boolean => s.length === length && /^\d+$/.test(s)

const mod10Check = (digits: string, weights: ReadonlyArray<number>): number =>
  (10 - (weightedSum(digits, weights) % 10)) % 10

/** Check digit of a CBU's first block, from its 7 digits (bank 3 + branch 4). */
export const cbuBlock1CheckDigit = (bankBranch: string): number => mod10Check(bankBranch, BLOCK1_WEIGHTS)

/** Check digit of a CBU's second block, from its 13-digit account number. */
export const cbuBlock2CheckDigit = (account: string): number => mod10Check(account, BLOCK2_WEIGHTS)

/** Both check digits of a CBU/CVU: `[block1, block2]`. */
export const cbuCheckDigits = (bankBranch: string, account: string): readonly [number, number] => [
  cbuBlock1CheckDigit(bankBranch),
  cbuBlock2CheckDigit(account)
]

/**
 * A 22-digit number whose two blocks carry correct check digits. A CVU is a CBU-format number
 * too, so every valid CVU passes here.
 */
export const isValidCbu = (s: string): boolean =>
  isDigits(s, 22) &&
  cbuBlock1CheckDigit(s.slice(0, 7)) === Number(s[7]) &&
  cbuBlock2CheckDigit(s.slice(8, 21)) === Number(s[21])

/**
 * What is wrong with `s` as a CBU or CVU, in words an operator can act on: empty, a character
 * that is not a digit, the number of digits, or which block's check digit does not match;
 * `None` when it is valid (`isValidCbu`).
 */
export const cbuProblem = (s: string): Option.Option<string> => {
  if (s.length === 0) return Option.some("is empty")
  const other = /[^0-9]/.exec(s)
  if (other !== null) return Option.some(`must be 22 digits; "${other[0]}" is not a digit`)
  if (s.length !== 22) return Option.some(`must be 22 digits, got ${s.length}`)
  if (cbuBlock1CheckDigit(s.slice(0, 7)) !== Number(s[7]))
    return Option.some("has a wrong check digit in its first block (the 8th digit)")
  if (cbuBlock2CheckDigit(s.slice(8, 21)) !== Number(s[21]))
    return Option.some("has a wrong check digit in its second block (the last digit)")
  return Option.none()
}

/** A valid CBU-format number issued by a PSP (entity code "000"). */
export const isValidCvu = (s: string): boolean => s.startsWith("000") && isValidCbu(s)

/**
 * The CUIT check digit from the first 10 digits; `None` when the remainder rule yields 10,
 * which no valid CUIT has (the prefix must change instead, see `makeCuit`).
 */
export const cuitCheckDigit = (first10: string): Option.Option<number> => {
  const r = 11 - (weightedSum(first10, CUIT_WEIGHTS) % 11)
  return r === 11 ? Option.some(0) : r === 10 ? Option.none() : Option.some(r)
}

/** 11 bare digits, a known type prefix and a correct check digit. Use `normalizeCuit` first for "20-…-6". */
export const isValidCuit = (s: string): boolean =>
  isDigits(s, 11) &&
  CUIT_PREFIXES.has(s.slice(0, 2)) &&
  Option.exists(cuitCheckDigit(s.slice(0, 10)), (d) => d === Number(s[10]))

/**
 * What is wrong with `s` as a bare CUIT (after `normalizeCuit`), in words an operator can act on:
 * a character that is not a digit, the number of digits, an unknown type prefix or a check digit
 * that does not match; `None` when it is valid. `dashes`: the input accepted dashes (and says so).
 */
export const cuitProblem = (s: string, dashes = false): Option.Option<string> => {
  const other = /[^0-9]/.exec(s)
  if (other !== null) {
    return Option.some(
      `must be 11 digits${dashes ? " (dashes are accepted, e.g. 30-71234567-1)" : ""}; "${other[0]}" is not a digit`
    )
  }
  if (s.length !== 11) return Option.some(`must be 11 digits, got ${s.length}`)
  if (!CUIT_PREFIXES.has(s.slice(0, 2))) {
    return Option.some(
      `must start with a CUIT type (${[...CUIT_PREFIXES].join(", ")}), got "${s.slice(0, 2)}"`
    )
  }
  return Option.exists(cuitCheckDigit(s.slice(0, 10)), (d) => d === Number(s[10]))
    ? Option.none()
    : Option.some("has a wrong check digit (the last digit): a digit is probably mistyped")
}

/** A sender field of a transfer a bank reported: its account (CBU or CVU) or its CUIT. */
export const SenderField = Schema.Literal("sender_address", "sender_cuit")
export type SenderField = typeof SenderField.Type

/**
 * Something wrong with the sender of a transfer as its bank reported it: the money is credited
 * all the same (it arrived), the transfer shows it, and no refund is sent there.
 */
export class SenderProblem extends Class<SenderProblem>("SenderProblem")({
  field: SenderField,
  /** What is wrong with it (`cbuProblem`, `cuitProblem`). */
  reason: Schema.String
}) {}

/**
 * What is wrong with a transfer's sender account (a CBU or CVU) and CUIT as a bank reported them,
 * checked as a client's would be; empty when both are valid.
 */
export const senderProblems = (account: string, cuit: string): ReadonlyArray<SenderProblem> => {
  const problems: Array<SenderProblem> = []
  Option.map(cbuProblem(account), (reason) =>
    problems.push(new SenderProblem({ field: "sender_address", reason }, true))
  )
  Option.map(cuitProblem(cuit), (reason) =>
    problems.push(new SenderProblem({ field: "sender_cuit", reason }, true))
  )
  return problems
}

/** Strips the dashes and spaces people write CUITs with ("20-12345678-6" → "20123456786"). */
export const normalizeCuit = (s: string): string => s.replace(/[-\s]/g, "")

/** 6–20 characters of lowercase letters, digits, `.` and `-`. */
export const isValidAlias = (s: string): boolean => /^[a-z0-9.-]{6,20}$/.test(s)

export const Cbu = Schema.String.pipe(
  Schema.filter(isValidCbu, { message: () => "must be a valid 22-digit CBU" }),
  Schema.brand("Cbu")
)
export type Cbu = typeof Cbu.Type

export const Cvu = Schema.String.pipe(
  Schema.filter(isValidCvu, { message: () => "must be a valid 22-digit CVU" }),
  Schema.brand("Cvu")
)
export type Cvu = typeof Cvu.Type

/** 11 bare digits (no dashes), a known type prefix and a correct check digit. */
export const Cuit = Schema.String.pipe(
  Schema.filter((s) => Option.getOrUndefined(cuitProblem(s))),
  Schema.brand("Cuit")
)
export type Cuit = typeof Cuit.Type

/** `Cuit` after dashes and spaces are removed (see `CuitInput`): its messages say dashes are accepted. */
export const CuitWithoutDashes = Schema.String.pipe(
  Schema.filter((s) => Option.getOrUndefined(cuitProblem(s, true))),
  Schema.brand("Cuit")
)

export const Alias = Schema.String.pipe(
  Schema.filter(isValidAlias, {
    message: () => "must be a valid alias: 6-20 characters of a-z, 0-9, '.' and '-'"
  }),
  Schema.brand("Alias")
)
export type Alias = typeof Alias.Type

/** Where a payout can be sent: a CVU, a CBU or an alias. */
export const PayoutAddress = Schema.String.pipe(
  Schema.filter((s) => isValidCbu(s) || isValidAlias(s), {
    message: () => "must be a valid CVU, CBU or alias"
  }),
  Schema.brand("PayoutAddress")
)
export type PayoutAddress = typeof PayoutAddress.Type

const requireDigits = (name: string, value: string, length: number): void => {
  if (!isDigits(value, length)) {
    throw new Cause.IllegalArgumentException(`${name} must be ${length} digits, got "${value}"`)
  }
}

/** A CBU from bank+branch (7 digits) and account (13 digits), with both check digits appended. */
export const makeCbu = (bankBranch: string, account: string): Cbu => {
  requireDigits("bankBranch", bankBranch, 7)
  requireDigits("account", account, 13)
  const [d1, d2] = cbuCheckDigits(bankBranch, account)
  return Cbu.make(`${bankBranch}${d1}${account}${d2}`)
}

/** A CVU from the PSP code (7 digits, starting "000") and account (13 digits). */
export const makeCvu = (psp: string, account: string): Cvu => {
  requireDigits("psp", psp, 7)
  if (!psp.startsWith("000")) throw new Cause.IllegalArgumentException(`a CVU's PSP code starts with "000"`)
  return Cvu.make(makeCbu(psp, account))
}

/**
 * A valid CUIT for a DNI. When the check digit would be 10, AFIP changes the prefix instead:
 * people (20, 27) become 23 and companies (30) become 33, which always yields a digit.
 */
export const makeCuit = (prefix: "20" | "27" | "30", dni: string): Cuit => {
  requireDigits("dni", dni, 8)
  return Option.match(cuitCheckDigit(prefix + dni), {
    onSome: (d) => Cuit.make(`${prefix}${dni}${d}`),
    onNone: () => {
      const fallback = prefix === "30" ? "33" : "23"
      const d = Option.getOrThrow(cuitCheckDigit(fallback + dni))
      return Cuit.make(`${fallback}${dni}${d}`)
    }
  })
}
