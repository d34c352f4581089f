/**
 * `examples/client-script`: its `src/main.ts` is the README's client walkthrough, character for
 * character, and `npm start` in its folder (tsx on the sources, no build) runs it against a real
 * server (`test/server.ts`), twice: each run makes a new order, so each prints `credited` and
 * `SUCCESS`.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { firstTsBlock, read } from "./documents.js"
import { type RunningServer, START_TIMEOUT, startServer } from "./server.js"

const example = fileURLToPath(new URL("../../../examples/client-script/", import.meta.url))

const npmStart = (env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      "npm",
      ["start", "--silent"],
      { cwd: example, env: { ...process.env, ...env }, timeout: 90_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
    )
  })

let server: RunningServer

beforeAll(async () => {
  server = await startServer()
}, START_TIMEOUT)

afterAll(async () => {
  await server?.stop()
})

describe("examples/client-script", () => {
  it("is the README's client walkthrough as written", () => {
    const walkthrough = firstTsBlock(read("../../../README.md"), "### 3. The same from JavaScript")
    expect(read("../../../examples/client-script/src/main.ts")).toBe(walkthrough)
  })

  it("npm start prints credited and SUCCESS, on every run", async () => {
    const env = {
      COBRO_URL: server.base,
      COBRO_CLIENT_ID: server.credentials.clientId,
      COBRO_CLIENT_SECRET: server.credentials.clientSecret
    }
    for (let run = 0; run < 2; run++) {
      const result = await npmStart(env)
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" })
      expect(result.stdout.trim().split("\n")).toEqual(["credited", "SUCCESS", "404 payment.not.found"])
    }
  }, 200_000)
})
