/** Outgoing transfers in flight under SIGKILL on a SQLite file (the scenario: `inFlight.ts`). */
import { describe, it } from "vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { killMidFlightAndRestart, sqliteReader } from "./inFlight.js"

describe("outgoing transfers in flight: cobro serve on BIND, killed with SIGKILL", () => {
  it("SQLite: some sends timed out after applying, SIGKILL mid-flight; after restart each is settled once", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-inflight-db-"))
    const file = path.join(dir, "cobro.db")
    const reader = sqliteReader(file)
    try {
      await killMidFlightAndRestart(`file:${file}`, reader)
    } finally {
      await reader.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 480_000)
})
