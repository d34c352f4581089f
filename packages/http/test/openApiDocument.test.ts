/**
 * `docs/openapi.json` is the document the server serves, checked in so clients can generate code
 * and review API changes in a diff. It is generated (`npm run openapi`); this test fails when a
 * change to `CobroApi` was not followed by a regeneration.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import { documentPath, referencePath, render, renderApiReference } from "../scripts/openApiDocument.js"

const STALE = "docs/openapi.json is stale: run `npm run openapi`"
const STALE_REFERENCE = "docs/api.md is stale: run `npm run openapi`"

/** Where two texts first differ, as a line number and both lines, for the failure message. */
const firstDifference = (expected: string, actual: string): string => {
  const a = expected.split("\n")
  const b = actual.split("\n")
  const line = a.findIndex((text, i) => text !== b[i])
  const at = line === -1 ? a.length : line
  return `first difference at line ${at + 1}:\n  generated:  ${a[at] ?? "(end of file)"}\n  checked in: ${b[at] ?? "(end of file)"}`
}

describe("docs/openapi.json", () => {
  it.effect("is the document the server serves at /openapi.json", () =>
    Effect.gen(function* () {
      const generated = yield* Effect.promise(render)
      const checkedIn = yield* Effect.promise(() => fs.readFile(documentPath, "utf8").catch(() => undefined))
      if (checkedIn === undefined) return expect.fail(`${STALE} (the file is missing)`)
      if (checkedIn !== generated) return expect.fail(`${STALE}\n${firstDifference(generated, checkedIn)}`)
      expect(JSON.parse(checkedIn)).toMatchObject({ openapi: expect.stringMatching(/^3\.1\./) })
    })
  )

  it.effect("is the same on every generation (no dates, random values or server addresses)", () =>
    Effect.gen(function* () {
      const [first, second] = yield* Effect.all([Effect.promise(render), Effect.promise(render)])
      expect(second).toBe(first)
      const document = JSON.parse(first) as Record<string, unknown>
      // A `servers` entry would pin the document to one deployment (and `localhost` is none).
      expect(document["servers"]).toBeUndefined()
      expect(first).not.toMatch(/localhost|127\.0\.0\.1|cobro\.invalid/)
    })
  )

  it.effect("docs/api.md is the reference rendered from it, naming every route", () =>
    Effect.gen(function* () {
      const generated = yield* Effect.promise(renderApiReference)
      const checkedIn = yield* Effect.promise(() => fs.readFile(referencePath, "utf8").catch(() => undefined))
      if (checkedIn === undefined) return expect.fail(`${STALE_REFERENCE} (the file is missing)`)
      if (checkedIn !== generated)
        return expect.fail(`${STALE_REFERENCE}\n${firstDifference(generated, checkedIn)}`)
      const document = JSON.parse(yield* Effect.promise(render)) as {
        paths: Record<string, Record<string, { summary?: string }>>
      }
      for (const [path, methods] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          // Every route has a summary, and the reference has a section for it.
          expect(operation.summary, `${method} ${path}`).toBeTruthy()
          expect(checkedIn).toContain(`### ${method.toUpperCase()} ${path} — ${operation.summary}`)
        }
      }
    })
  )
})
