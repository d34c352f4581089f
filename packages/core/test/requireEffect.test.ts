import { describe, expect, it } from "@effect/vitest"
import { effectMismatch, requireEffect, satisfiesCaret } from "../src/internal/requireEffect.js"

const core = { name: "@cobro/core", range: "^3.22.4", install: "npm install effect@^3.22" }

describe("the check of the effect a built package gets", () => {
  it("takes what npm takes for a caret range", () => {
    expect(satisfiesCaret("3.22.4", "^3.22.4")).toBe(true)
    expect(satisfiesCaret("3.30.0", "^3.22.4")).toBe(true)
    expect(satisfiesCaret("3.22.3", "^3.22.4")).toBe(false)
    expect(satisfiesCaret("3.9.9", "^3.22.4")).toBe(false)
    expect(satisfiesCaret("4.1.0", "^3.22.4")).toBe(false)
    expect(satisfiesCaret("2.4.19", "^3.22.4")).toBe(false)
    expect(satisfiesCaret("3.23.0-beta.1", "^3.22.4")).toBe(false)
    expect(satisfiesCaret("0.97.5", "^0.97.2")).toBe(true)
    expect(satisfiesCaret("0.98.0", "^0.97.2")).toBe(false)
    expect(satisfiesCaret("3.22.4", ">=3")).toBe(false)
  })

  it("says in one sentence what was found and what to install", () => {
    expect(effectMismatch(core, { version: "3.22.4" })).toBeUndefined()
    expect(effectMismatch(core, { version: "4.1.0" })).toBe(
      "@cobro/core needs effect ^3.22.4 (Effect 3) but found effect 4.1.0: install the Effect 3 line with `npm install effect@^3.22`."
    )
    expect(effectMismatch(core, undefined)).toBe(
      "@cobro/core needs effect ^3.22.4 (Effect 3) but cannot find it: install the Effect 3 line with `npm install effect@^3.22`."
    )
    expect(effectMismatch(core, {})).toContain("but cannot find it")
  })

  it("throws the sentence alone, passes Effect 3, and checks nothing when the manifest cannot be read", async () => {
    const effect4 = requireEffect(core, () => Promise.resolve({ default: { version: "4.1.0" } }))
    await expect(effect4).rejects.toThrow(
      "@cobro/core needs effect ^3.22.4 (Effect 3) but found effect 4.1.0"
    )
    const error = await effect4.then(
      () => undefined,
      (e: unknown) => e as Error
    )
    expect(error?.stack).toBe(`Error: ${error?.message}`)

    const missing = Object.assign(new Error("Cannot find package 'effect'"), { code: "ERR_MODULE_NOT_FOUND" })
    await expect(requireEffect(core, () => Promise.reject(missing))).rejects.toThrow("but cannot find it")

    await expect(
      requireEffect(core, () => Promise.resolve({ default: { version: "3.22.4" } }))
    ).resolves.toBeUndefined()
    // A runtime without JSON imports: the package loads as it would without the check.
    const unsupported = Object.assign(new TypeError("needs an import attribute"), {
      code: "ERR_IMPORT_ATTRIBUTE_MISSING"
    })
    await expect(requireEffect(core, () => Promise.reject(unsupported))).resolves.toBeUndefined()
  })
})
