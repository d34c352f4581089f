/** Outgoing transfers in flight under SIGKILL on Postgres (the scenario: `inFlight.ts`). */
import { describe, it } from "vitest"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { Effect } from "effect"
import { killMidFlightAndRestart, pgReader } from "./inFlight.js"

const pgUp = await Effect.runPromise(pgAvailable)
if (!pgUp) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(
    `\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres in-flight test is SKIPPED !!!\n`
  )
}

describe("outgoing transfers in flight: cobro serve on BIND, killed with SIGKILL", () => {
  it.skipIf(!pgUp)(
    "Postgres: some sends timed out after applying, SIGKILL mid-flight; after restart each is settled once",
    () =>
      Effect.runPromise(
        Effect.scoped(
          Effect.flatMap(freshPgUrl, (url) =>
            Effect.promise(async () => {
              const reader = pgReader(url)
              try {
                await killMidFlightAndRestart(url, reader)
              } finally {
                await reader.close()
              }
            })
          )
        )
      ),
    480_000
  )
})
