/**
 * cobro's storage on Postgres: a connection pool, then the migrations. Units of work lock the
 * rows they change (`SELECT … FOR UPDATE`), so several instances can share one database.
 */
import { PgClient } from "@effect/sql-pg"
import { SqlStorage } from "@cobro/sql"
import { Config, Effect, Layer, Redacted } from "effect"

export interface Options {
  readonly url: Redacted.Redacted
  readonly maxConnections?: number
}

/** The Postgres client alone. */
export const client = (options: Options) =>
  PgClient.layer({ url: options.url, maxConnections: options.maxConnections ?? 10 })

/** Every storage port of cobro on Postgres, migrated. */
export const layer = (options: Options) => SqlStorage.layer.pipe(Layer.provideMerge(client(options)))

/** `layer` with the URL from configuration (e.g. `Config.redacted("COBRO_DATABASE_URL")`). */
export const layerConfig = (url: Config.Config<Redacted.Redacted>) =>
  Layer.unwrapEffect(Effect.map(url, (u) => layer({ url: u })))
