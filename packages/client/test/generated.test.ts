/** The generated sources follow `docs/openapi.json`: regenerate with `npm run generate -w @cobro/client`. */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { generate } from "../scripts/generate.js"

describe("src/generated", () => {
  it("is what the OpenAPI document generates", async () => {
    for (const [file, text] of await generate()) {
      expect(fs.readFileSync(file, "utf8"), `${file} is stale: npm run generate -w @cobro/client`).toBe(text)
    }
  }, 60_000)
})
