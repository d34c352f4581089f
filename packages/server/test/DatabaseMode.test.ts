/**
 * A database knows what it is (issue 45 item 2): its first start records its mode and bank; a
 * server or a command in another mode or on another bank exits 1 with a message naming both and
 * changes nothing in it (every table and row compared before and after), on SQLite files and on
 * Postgres. A database from before the record is judged by what it holds, and
 * `cobro database record` says what it is when that does not tell.
 */
import { describe, expect, it } from "@effect/vitest"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Exit, type Scope } from "effect"
import { Server, ServerConfig, Storage } from "../src/index.js"
import {
  type Env,
  cli,
  cliJson,
  configOf,
  failureOf,
  spawnCobro,
  START_TIMEOUT,
  tempDb,
  tempDir
} from "./support.js"

const pg = await Effect.runPromise(pgAvailable)
if (!pg) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(`\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres cases are SKIPPED !!!\n`)
}

const secretKey = "ab".repeat(32)
const sandbox = (url: string): Env => ({ COBRO_DATABASE_URL: url })
const production = (url: string, bank?: "bind"): Env => ({
  COBRO_DATABASE_URL: url,
  COBRO_MODE: "production",
  COBRO_SECRET_KEY: secretKey,
  ...(bank === undefined ? {} : { COBRO_BANK: bank })
})

const databaseOf = (url: string) => ServerConfig.parseDatabaseUrl(url)

/** Runs `f` over a bare client of the database at `url` (no check, no migration). */
const withSql = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.gen(function* () {
    const database = yield* databaseOf(url)
    return yield* Effect.flatMap(SqlClient.SqlClient, f).pipe(
      Effect.provide(Storage.client(database)),
      Effect.scoped
    )
  }).pipe(Effect.orDie)

/** Every table of the database and every row of each, read only: what "nothing changed" compares. */
const contents = (url: string) =>
  withSql(url, (sql) =>
    Effect.gen(function* () {
      const tables = yield* sql.onDialectOrElse({
        sqlite: () =>
          sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`,
        orElse: () =>
          sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
            WHERE table_schema = current_schema() ORDER BY table_name`
      })
      const dump: Record<string, ReadonlyArray<unknown>> = {}
      for (const { name } of tables) dump[name] = yield* sql.unsafe(`SELECT * FROM ${name} ORDER BY 1`)
      return dump
    })
  )

/** The message of a failed run (what `cobro` prints after `cobro: `). */
const messageOf = (exit: Exit.Exit<unknown, unknown>): string =>
  Exit.isFailure(exit)
    ? Cause.failureOption(exit.cause).pipe((o) =>
        o._tag === "Some" && o.value instanceof Storage.StorageError
          ? o.value.message
          : Cause.pretty(exit.cause)
      )
    : "(succeeded)"

const createMerchant = (env: Env, user_id: string) =>
  cliJson(
    [
      "users",
      "create",
      "--name",
      "Tienda",
      "--email",
      `${user_id}@example.com`,
      "--cuit",
      "30712345671"
    ].concat(["--user-id", user_id]),
    env
  )

/** A production database (made by a command in production mode) refused by sandbox and by another bank. */
const refusesAnotherMode = (fresh: Effect.Effect<string, unknown, Scope.Scope>) =>
  Effect.gen(function* () {
    const url = yield* fresh
    const where = ServerConfig.describeDatabase(yield* databaseOf(url))
    yield* createMerchant(production(url), "prod_1")
    const before = yield* contents(url)
    expect(before["cobro_database"]).toMatchObject([
      { mode: "production", bank: "sandbox", recorded_by: "first start" }
    ])

    // The server in sandbox mode: no demo merchant, no sandbox key, no migration, nothing.
    const served = yield* Server.run(yield* configOf({ ...sandbox(url), PORT: "0" })).pipe(
      Effect.timeout("60 seconds"),
      Effect.exit
    )
    const refusal = messageOf(served)
    expect(refusal).toMatch(
      new RegExp(
        `^${where.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} is a production database on the sandbox bank \\(recorded \\d{4}-.*, first start\\), and this configuration is sandbox mode on the sandbox bank \\(COBRO_MODE=sandbox, COBRO_BANK=sandbox\\)\\. Nothing was changed\\. To use this database, start with COBRO_MODE=production COBRO_BANK=sandbox`
      )
    )
    expect(yield* contents(url)).toEqual(before)

    // Every command in sandbox mode: the same refusal, the same nothing.
    for (const args of [["users", "list"], ["migrate"], ["ledger", "verify"], ["sandbox", "codes"]]) {
      const result = yield* cli(args, sandbox(url))
      expect(failureOf(result), args.join(" ")).toBe(refusal)
    }
    const created = yield* cli(
      ["users", "create", "--name", "Intrusa", "--email", "x@example.com", "--cuit", "30712345671"],
      sandbox(url)
    )
    expect(failureOf(created)).toBe(refusal)
    expect(yield* contents(url)).toEqual(before)
    expect((before["cobro_users"] ?? []).map((row) => (row as { user_id: string }).user_id)).toEqual([
      "prod_1"
    ])

    // Production on another bank: refused too, naming both banks.
    const otherBank = yield* cli(["users", "list"], production(url, "bind"))
    expect(failureOf(otherBank)).toContain("is a production database on the sandbox bank (recorded ")
    expect(failureOf(otherBank)).toContain(
      "this configuration is production mode on BIND (COBRO_MODE=production, COBRO_BANK=bind)"
    )
    expect(yield* contents(url)).toEqual(before)

    // Its own mode opens it.
    const listed = yield* cli(["users", "list"], production(url))
    expect(Exit.isSuccess(listed.exit)).toBe(true)
    expect(listed.stdout).toContain("prod_1")
  })

/**
 * A database as the version before the record left it: the record's migration (0020) and every
 * later one undone, since the Migrator runs only the ids above the newest applied. A migration
 * added after 0020 adds what it creates here.
 */
const unrecord = (url: string) =>
  withSql(url, (sql) =>
    Effect.gen(function* () {
      yield* sql`DROP TABLE cobro_database`
      yield* sql`DROP TABLE IF EXISTS cobro_rate_limits`
      yield* sql`DROP INDEX IF EXISTS cobro_transfers_received`
      yield* sql`DROP TABLE IF EXISTS cobro_bank_quarantine`
      yield* sql`DROP TABLE IF EXISTS cobro_web_sessions`
      yield* sql`DROP TABLE IF EXISTS cobro_partner_passwords`
      yield* sql`DELETE FROM cobro_migrations WHERE migration_id >= 20`
    })
  )

const reconciledWithBind = (url: string) =>
  withSql(
    url,
    (sql) =>
      sql`INSERT INTO cobro_bank_reconciliation (account, cursor_ms) VALUES ('bind:cobro-client', 1764374400000)`
  )

const recordOf = (url: string) => Effect.map(contents(url), (dump) => dump["cobro_database"])

/** Older databases: recorded when their contents agree with the configuration, refused otherwise. */
const olderDatabases = (fresh: Effect.Effect<string, unknown, Scope.Scope>) =>
  Effect.gen(function* () {
    // A production BIND database from before the record, started without COBRO_MODE (the issue).
    const bind = yield* fresh
    yield* createMerchant(sandbox(bind), "m_1")
    yield* unrecord(bind)
    yield* reconciledWithBind(bind)
    const before = yield* contents(bind)
    expect(before["cobro_database"]).toBeUndefined()
    const plain = yield* cli(["users", "list"], sandbox(bind))
    expect(failureOf(plain)).toContain(
      "does not record its mode yet (it was created before cobro recorded it) and it was reconciled with a real bank's statement (bind:cobro-client): it looks like a production database; this configuration is sandbox mode on the sandbox bank (COBRO_MODE=sandbox, COBRO_BANK=sandbox). Nothing was changed. Say what it is with `cobro database record --mode sandbox|production --bank sandbox|bind`"
    )
    const sandboxOnBind = yield* cli(["migrate"], { ...sandbox(bind), COBRO_BANK: "bind" })
    expect(failureOf(sandboxOnBind)).toContain(
      "its contents do not tell whether it is a sandbox or a production database (reconciled with bind:cobro-client)"
    )
    const wrongRecord = yield* cli(
      ["database", "record", "--mode", "sandbox", "--bank", "sandbox"],
      sandbox(bind)
    )
    expect(failureOf(wrongRecord)).toContain(
      "cannot be recorded as sandbox on the sandbox bank: it was reconciled with a real bank's statement (bind:cobro-client), not the sandbox bank's. Nothing was changed"
    )
    expect(yield* contents(bind)).toEqual(before)
    // Started as what it is, it is recorded so: its contents agree.
    const inferred = yield* cli(["migrate"], production(bind, "bind"))
    expect(Exit.isSuccess(inferred.exit)).toBe(true)
    expect(inferred.stderr).toContain(
      `${ServerConfig.describeDatabase(yield* databaseOf(bind))}: recorded as a production database on BIND (inferred: reconciled with bind:cobro-client)`
    )
    expect(yield* recordOf(bind)).toMatchObject([
      { mode: "production", bank: "bind", recorded_by: "inferred: reconciled with bind:cobro-client" }
    ])

    // A developer's sandbox database: recorded as the sandbox it is, on the first start after.
    const dev = yield* fresh
    yield* createMerchant(sandbox(dev), "dev_1")
    yield* unrecord(dev)
    expect(Exit.isSuccess((yield* cli(["users", "list"], sandbox(dev))).exit)).toBe(true)
    expect(yield* recordOf(dev)).toMatchObject([
      { mode: "sandbox", bank: "sandbox", recorded_by: "inferred: no real bank in its contents" }
    ])

    // Contents that disagree (a moved test clock in a database started as production): refused
    // until an operator says what it is.
    const mixed = yield* fresh
    yield* createMerchant(sandbox(mixed), "mx_1")
    yield* unrecord(mixed)
    yield* reconciledWithBind(mixed)
    yield* withSql(
      mixed,
      (sql) => sql`INSERT INTO cobro_test_clocks (user_id, offset_ms, updated_ms) VALUES ('mx_1', 60000, 1)`
    )
    const unchanged = yield* contents(mixed)
    const refused = yield* cli(["migrate"], production(mixed, "bind"))
    expect(failureOf(refused)).toContain("it holds what only a sandbox makes (1 moved test clock)")
    expect(yield* contents(mixed)).toEqual(unchanged)
    const recorded = yield* cliJson(
      ["database", "record", "--mode", "production", "--bank", "bind"],
      sandbox(mixed)
    )
    expect(recorded).toMatchObject({
      mode: "production",
      bank: "bind",
      recorded_by: "cobro database record",
      already_recorded: false
    })
    expect(Exit.isSuccess((yield* cli(["migrate"], production(mixed, "bind"))).exit)).toBe(true)
    // A recorded database keeps its mode.
    const again = yield* cli(["database", "record", "--mode", "sandbox", "--bank", "sandbox"], sandbox(mixed))
    expect(failureOf(again)).toContain("is a production database on BIND (recorded ")
    const same = yield* cliJson(
      ["database", "record", "--mode", "production", "--bank", "bind"],
      sandbox(mixed)
    )
    expect(same).toMatchObject({ mode: "production", bank: "bind", already_recorded: true })
  })

describe("a database knows what it is", () => {
  it.scoped("its first start records its mode and bank", () =>
    Effect.gen(function* () {
      const url = yield* tempDb
      expect(Exit.isSuccess((yield* cli(["migrate"], sandbox(url))).exit)).toBe(true)
      expect(yield* recordOf(url)).toMatchObject([
        { mode: "sandbox", bank: "sandbox", recorded_by: "first start" }
      ])
      expect(Exit.isSuccess((yield* cli(["users", "list"], sandbox(url))).exit)).toBe(true)
    })
  )

  it.scopedLive(
    "SQLite: another mode or bank is refused and changes nothing; its own opens it",
    () => refusesAnotherMode(tempDb),
    120_000
  )

  it.scopedLive.skipIf(!pg)(
    "Postgres: another mode or bank is refused and changes nothing; its own opens it",
    () => refusesAnotherMode(freshPgUrl),
    120_000
  )

  it.scopedLive(
    "SQLite: an older database is recorded when its contents agree, refused otherwise",
    () => olderDatabases(tempDb),
    120_000
  )

  it.scopedLive.skipIf(!pg)(
    "Postgres: an older database is recorded when its contents agree, refused otherwise",
    () => olderDatabases(freshPgUrl),
    120_000
  )

  it.live(
    "cobro serve in sandbox mode on a production database exits 1 with the message",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const dir = yield* tempDir
          const url = `${dir}/cobro.db`
          yield* createMerchant(production(url), "prod_1")
          const before = yield* contents(url)
          const result = yield* Effect.promise(
            () =>
              new Promise<{ code: number | null; stderr: string }>((resolve) => {
                const running = spawnCobro(["serve"], { ...sandbox(url), PORT: "0" }, dir)
                running.child.once("exit", (code) => resolve({ code, stderr: running.stderr() }))
              })
          )
          expect(result.code).toBe(1)
          expect(result.stderr).toContain(
            `cobro: SQLite ${url} is a production database on the sandbox bank (recorded `
          )
          expect(yield* contents(url)).toEqual(before)
        })
      ),
    START_TIMEOUT + 10_000
  )
})
