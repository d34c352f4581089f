/**
 * Which database a `cobro` command acts on: the one the server would use (the same `load`), named
 * on stderr; a command that only reads refuses a database that does not exist, saying where it
 * looked, and creates nothing (issue 25).
 */
import { describe, expect, it } from "@effect/vitest"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ServerConfig, Storage } from "../src/index.js"
import { cli, failureOf, spawnCobro, tempDb, tempDir } from "./support.js"

const pg = await Effect.runPromise(pgAvailable)
if (!pg) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(`\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres case is SKIPPED !!!\n`)
}

const readOnly = [
  ["ledger", "verify"],
  ["webhooks", "list"],
  ["sandbox", "codes"],
  ["webhooks", "replay", "evt_x"],
  ["accounts", "set-status", "u1", "ACTIVE"]
] as const

/** `cobro <args>` as a process in `cwd` (the test environment sets no `COBRO_DATABASE_URL`). */
const runIn = (cwd: string, args: ReadonlyArray<string>) =>
  Effect.promise(
    () =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const running = spawnCobro(args, {}, cwd)
        running.child.once("exit", (code) =>
          resolve({ code, stdout: running.stdout(), stderr: running.stderr() })
        )
      })
  )

if (process.env["COBRO_DATABASE_URL"] !== undefined)
  throw new Error("unset COBRO_DATABASE_URL to run these tests")

describe("cobro CLI: the database it acts on", () => {
  it("defaultDatabase finds .cobro/cobro.db in the working directory or above it, as git finds .git", () => {
    const at = (existing: ReadonlyArray<string>) => (file: string) => existing.includes(file)
    expect(ServerConfig.defaultDatabase("/srv/app/examples", at([]))).toEqual({
      _tag: "Sqlite",
      filename: "./.cobro/cobro.db"
    })
    expect(ServerConfig.defaultDatabase("/srv/app/examples", at(["/srv/app/.cobro/cobro.db"]))).toEqual({
      _tag: "Sqlite",
      filename: "/srv/app/.cobro/cobro.db"
    })
    expect(
      ServerConfig.defaultDatabase(
        "/srv/app/examples",
        at(["/srv/app/.cobro/cobro.db", "/srv/app/examples/.cobro/cobro.db"])
      )
    ).toEqual({ _tag: "Sqlite", filename: "./.cobro/cobro.db" })
  })

  it.scoped("a read-only command refuses a SQLite file that does not exist and creates nothing", () =>
    Effect.gen(function* () {
      const file = yield* tempDb
      for (const args of readOnly) {
        const result = yield* cli(args, { COBRO_DATABASE_URL: file })
        expect(Exit.isFailure(result.exit), args.join(" ")).toBe(true)
        expect(failureOf(result)).toBe(
          `no cobro database: looked for SQLite ${file} (COBRO_DATABASE_URL). Run this where the server runs, set COBRO_DATABASE_URL, or create one with \`cobro migrate\``
        )
        expect(result.stderr).toBe(`database: SQLite ${file}`)
      }
      expect(fs.existsSync(file)).toBe(false)
      expect(fs.existsSync(path.dirname(file))).toBe(false)
    })
  )

  it.scoped("with the database present, every command names it on stderr and runs", () =>
    Effect.gen(function* () {
      const file = yield* tempDb
      const env = { COBRO_DATABASE_URL: `file:${file}` }
      const migrated = yield* cli(["migrate"], env)
      expect(Exit.isSuccess(migrated.exit)).toBe(true)
      expect(migrated.stderr).toBe(`database: SQLite ${file}`)
      const listed = yield* cli(["webhooks", "list"], env)
      expect(Exit.isSuccess(listed.exit)).toBe(true)
      expect(listed.stderr).toBe(`database: SQLite ${file}`)
      // An empty file (not a cobro database) is refused too, and not migrated.
      const other = path.join(path.dirname(file), "empty.db")
      fs.writeFileSync(other, "")
      const empty = yield* cli(["ledger", "verify"], { COBRO_DATABASE_URL: other })
      expect(failureOf(empty)).toMatch(/^no cobro database: looked for SQLite .*empty\.db/)
      expect(yield* Storage.hasSchema({ _tag: "Sqlite", filename: other })).toBe(false)
    })
  )

  it.scoped.skipIf(!pg)("Postgres: a database without cobro's schema is refused and not migrated", () =>
    Effect.gen(function* () {
      const url = yield* freshPgUrl
      const env = { COBRO_DATABASE_URL: url }
      const refused = yield* cli(["webhooks", "list"], env)
      expect(failureOf(refused)).toMatch(/^no cobro database: looked for Postgres postgres:\/\//)
      expect(refused.stderr).toMatch(/^database: Postgres postgres:\/\//)
      const config = yield* ServerConfig.parseDatabaseUrl(url)
      expect(yield* Storage.hasSchema(config)).toBe(false)
      expect(Exit.isSuccess((yield* cli(["migrate"], env)).exit)).toBe(true)
      expect(yield* Storage.hasSchema(config)).toBe(true)
      expect(Exit.isSuccess((yield* cli(["webhooks", "list"], env)).exit)).toBe(true)
    })
  )

  it.live(
    "run from another folder: refuses, says where it looked, creates nothing; finds the database above",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const root = yield* tempDir
          const sub = path.join(root, "examples")
          fs.mkdirSync(sub)
          const missing = yield* runIn(sub, ["ledger", "verify"])
          expect(missing.code).toBe(1)
          expect(missing.stderr).toContain(
            `no cobro database: looked for .cobro/cobro.db in ${sub} and the directories above it`
          )
          expect(fs.existsSync(path.join(sub, ".cobro"))).toBe(false)

          const created = yield* runIn(root, ["migrate"])
          expect(created.code).toBe(0)
          const found = yield* runIn(sub, ["webhooks", "list"])
          expect(found.code).toBe(0)
          expect(found.stderr).toContain(`database: SQLite ${path.join(root, ".cobro", "cobro.db")}`)
          expect(fs.existsSync(path.join(sub, ".cobro"))).toBe(false)
        })
      ),
    120_000
  )
})
