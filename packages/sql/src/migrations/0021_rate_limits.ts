/**
 * The API's rate limit counts on Postgres (`@cobro/http`'s `RateLimitStore.layerPostgres`, through
 * rate-limiter-flexible, in the table layout it reads and writes): one row per limit and key,
 * `expire` the end of its window in epoch milliseconds. Shared by every instance on the database.
 * SQLite keeps its counts in the server's process (a single instance), so it has no table.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      sql.unsafe(`CREATE TABLE cobro_rate_limits (
        key VARCHAR(255) PRIMARY KEY,
        points INTEGER NOT NULL DEFAULT 0,
        expire BIGINT
      )`),
    orElse: () => Effect.void
  })
})
