import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import {
  Alias,
  Cbu,
  cbuCheckDigits,
  Cuit,
  Cvu,
  isValidAlias,
  isValidCbu,
  isValidCuit,
  isValidCvu,
  makeCbu,
  makeCuit,
  makeCvu,
  normalizeCuit,
  PayoutAddress
} from "../src/bank/BankAccount.js"
import { CuitInput } from "../src/accounts/Accounts.js"

const CVU = "0000003100062244154712"
const CBU = "2850590940090418135201"

/** The message of a failed decode, or fails the test when the decode succeeds. */
const decodeMessage = <A, I>(schema: Schema.Schema<A, I>, input: unknown): string =>
  Either.match(Schema.decodeUnknownEither(schema)(input), {
    onLeft: (error) => error.message,
    onRight: (value) => expect.fail(`expected ${String(input)} to be rejected, got ${String(value)}`)
  })

describe("CBU / CVU", () => {
  it("accepts a known CVU, which is also CBU-format", () => {
    expect(isValidCvu(CVU)).toBe(true)
    expect(isValidCbu(CVU)).toBe(true)
  })

  it("accepts a known bank CBU, which is not a CVU", () => {
    expect(isValidCbu(CBU)).toBe(true)
    expect(isValidCvu(CBU)).toBe(false)
  })

  it("rejects a wrong check digit in either block", () => {
    // block 1 check digit is position 8 (1 → 2); block 2 check digit is the last (2 → 3)
    expect(isValidCbu("0000003200062244154712")).toBe(false)
    expect(isValidCbu("0000003100062244154713")).toBe(false)
    expect(isValidCvu("0000003200062244154712")).toBe(false)
    expect(isValidCvu("0000003100062244154713")).toBe(false)
    // a changed account digit breaks block 2
    expect(isValidCbu("0000003100062244154812")).toBe(false)
  })

  it("rejects wrong lengths and non-digits", () => {
    expect(isValidCbu(CVU.slice(0, 21))).toBe(false)
    expect(isValidCbu(CVU + "0")).toBe(false)
    expect(isValidCbu("")).toBe(false)
    expect(isValidCbu("000000310006224415471a")).toBe(false)
    expect(isValidCbu(" 0000003100062244154712")).toBe(false)
    expect(isValidCbu("0000003-100062244154712")).toBe(false)
  })

  it("computes the check digits of the known numbers", () => {
    expect(cbuCheckDigits("0000003", "0006224415471")).toEqual([1, 2])
    expect(cbuCheckDigits("2850590", "4009041813520")).toEqual([9, 1])
    expect(makeCvu("0000003", "0006224415471")).toBe(CVU)
    expect(makeCbu("2850590", "4009041813520")).toBe(CBU)
  })

  it("makeCvu produces valid CVUs and refuses bad input", () => {
    for (const account of ["0000000000000", "9999999999999", "1234567890123"]) {
      expect(isValidCvu(makeCvu("0000003", account))).toBe(true)
    }
    expect(() => makeCvu("2850590", "0000000000000")).toThrow(/000/)
    expect(() => makeCvu("0000003", "123")).toThrow(/13 digits/)
  })
})

describe("CUIT", () => {
  it("accepts valid CUITs", () => {
    expect(isValidCuit("20123456786")).toBe(true)
    expect(isValidCuit("27123456780")).toBe(true)
    expect(isValidCuit("30712345671")).toBe(true)
    expect(isValidCuit("23123456769")).toBe(true)
  })

  it("rejects a wrong check digit, a bad prefix and formatting", () => {
    expect(isValidCuit("20123456787")).toBe(false)
    // 21 is not a CUIT type even though 2 is the right check digit for it
    expect(isValidCuit("21123456782")).toBe(false)
    expect(isValidCuit("20-12345678-6")).toBe(false)
    expect(isValidCuit("2012345678")).toBe(false)
    expect(isValidCuit("2012345678a")).toBe(false)
  })

  it("rejects every check digit when the remainder rule gives 10", () => {
    for (let d = 0; d <= 9; d++) expect(isValidCuit(`2012345676${d}`)).toBe(false)
  })

  it("normalizes dashes and spaces", () => {
    expect(normalizeCuit("20-12345678-6")).toBe("20123456786")
    expect(normalizeCuit(" 20 12345678 6 ")).toBe("20123456786")
    expect(isValidCuit(normalizeCuit("20-12345678-6"))).toBe(true)
  })

  it("makeCuit appends the check digit and switches the prefix when it would be 10", () => {
    expect(makeCuit("20", "12345678")).toBe("20123456786")
    expect(makeCuit("27", "12345678")).toBe("27123456780")
    expect(makeCuit("20", "12345676")).toBe("23123456769")
    expect(makeCuit("27", "12345673")).toBe("23123456734")
    expect(makeCuit("30", "50000002")).toBe("33500000029")
    for (let n = 10_000_000; n < 10_000_300; n++) {
      expect(isValidCuit(makeCuit("20", String(n)))).toBe(true)
      expect(isValidCuit(makeCuit("27", String(n)))).toBe(true)
      expect(isValidCuit(makeCuit("30", String(n)))).toBe(true)
    }
  })
})

describe("alias", () => {
  it("accepts 6-20 lowercase letters, digits, dots and dashes", () => {
    for (const alias of ["sol.rio.mate", "abcdef", "a".repeat(20), "mi-cuenta.2024", "123456"]) {
      expect(isValidAlias(alias)).toBe(true)
    }
  })

  it("rejects wrong lengths, uppercase and other characters", () => {
    for (const alias of [
      "abcde",
      "a".repeat(21),
      "Sol.rio.mate",
      "sol_rio_mate",
      "sol rio",
      "sol.río.mate",
      ""
    ]) {
      expect(isValidAlias(alias)).toBe(false)
    }
  })
})

describe("schemas", () => {
  it.effect("decode valid values to brands", () =>
    Effect.gen(function* () {
      expect(yield* Schema.decodeUnknown(Cvu)(CVU)).toBe(CVU)
      expect(yield* Schema.decodeUnknown(Cbu)(CBU)).toBe(CBU)
      expect(yield* Schema.decodeUnknown(Cuit)("20123456786")).toBe("20123456786")
      expect(yield* Schema.decodeUnknown(Alias)("sol.rio.mate")).toBe("sol.rio.mate")
      for (const address of [CVU, CBU, "sol.rio.mate"]) {
        expect(yield* Schema.decodeUnknown(PayoutAddress)(address)).toBe(address)
      }
    })
  )

  it("name the rule in their messages", () => {
    expect(decodeMessage(Cvu, CBU)).toContain("must be a valid 22-digit CVU")
    expect(decodeMessage(Cvu, "0000003100062244154713")).toContain("must be a valid 22-digit CVU")
    expect(decodeMessage(Cbu, "123")).toContain("must be a valid 22-digit CBU")
    expect(decodeMessage(Cuit, "20-12345678-6")).toContain('must be 11 digits; "-" is not a digit')
    expect(decodeMessage(Alias, "Sol.Rio")).toContain("6-20 characters of a-z, 0-9, '.' and '-'")
    expect(decodeMessage(PayoutAddress, "0000003100062244154713")).toContain(
      "must be a valid CVU, CBU or alias"
    )
    expect(decodeMessage(PayoutAddress, "no")).toContain("must be a valid CVU, CBU or alias")
  })
})

describe("CUIT messages say what is wrong", () => {
  // 30-71234567-1 is valid; each case breaks one rule.
  const cases = [
    ["30-7123456-1", "must be 11 digits, got 10"],
    ["307123456712", "must be 11 digits, got 12"],
    ["30.71234567.1", 'must be 11 digits (dashes are accepted, e.g. 30-71234567-1); "." is not a digit'],
    ["30-7123456X-1", '"X" is not a digit'],
    ["12-71234567-1", 'must start with a CUIT type (20, 23, 24, 27, 30, 33, 34), got "12"'],
    ["30-71234567-2", "has a wrong check digit (the last digit): a digit is probably mistyped"],
    ["30-71234576-1", "has a wrong check digit (the last digit)"]
  ] as const
  it.each(cases)("%s: %s", (input, message) => {
    expect(decodeMessage(CuitInput, input)).toContain(message)
  })

  it("accepts dashes and spaces", () => {
    expect(Schema.decodeUnknownSync(CuitInput)("30-71234567-1")).toBe("30712345671")
    expect(Schema.decodeUnknownSync(CuitInput)(" 30 71234567 1 ")).toBe("30712345671")
  })
})
