import { Effect } from "effect"
import { pgAdminUrl, pgAvailable, postgres, runContract } from "../src/index.js"

const available = await Effect.runPromise(pgAvailable)
if (!available) {
  if (process.env["CI"] === "true") {
    throw new Error(
      `CI: Postgres at ${pgAdminUrl} is not reachable; the Postgres contract suite must run in CI`
    )
  }
  console.warn(
    `\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres storage contract suite is SKIPPED !!!\n`
  )
}

runContract(postgres, { skip: !available })
