/**
 * Where the data lives, from `COBRO_DATABASE_URL` or, unset, found as git finds `.git`; re-exported
 * by `ServerConfig`.
 */
import { Either, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** Where the data lives: a SQLite file or a Postgres database. */
export type Database =
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted }

export const DEFAULT_DATABASE_URL = "file:./.cobro/cobro.db"

/**
 * A database URL: `postgres://…` or `postgresql://…` is Postgres; `file:PATH`, `sqlite:PATH`,
 * `file:///absolute/path` or a plain path is a SQLite file (relative to the working directory).
 */
export const parseDatabaseUrl = (text: string): Either.Either<Database, string> => {
  const value = text.trim()
  if (value === "") return Either.left("must not be empty")
  if (/^postgres(?:ql)?:\/\//i.test(value)) {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return Either.left("is not a valid postgres:// URL")
    }
    if (url.hostname === "" && !url.searchParams.has("host")) {
      return Either.left("a postgres:// URL needs a host, e.g. postgres://user:password@localhost:5432/cobro")
    }
    return Either.right({ _tag: "Postgres", url: Redacted.make(value) })
  }
  if (/^file:\/\//i.test(value)) {
    try {
      return Either.right({ _tag: "Sqlite", filename: fileURLToPath(value) })
    } catch {
      return Either.left("is not a valid file:// URL")
    }
  }
  const prefixed = /^(?:file|sqlite):(.*)$/i.exec(value)
  if (prefixed !== null) {
    const path = prefixed[1]!.replace(/^\/\//, "")
    return path === "" ? Either.left("names no file") : Either.right({ _tag: "Sqlite", filename: path })
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)
  if (scheme !== null) {
    return Either.left(
      `uses the unsupported scheme "${scheme[1]}:"; use postgres://…, file:PATH or a plain path to a SQLite file`
    )
  }
  return Either.right({ _tag: "Sqlite", filename: value })
}

/** The database for logs: the SQLite path, or the Postgres URL without its password. */
export const describeDatabase = (database: Database): string => {
  if (database._tag === "Sqlite") return `SQLite ${database.filename}`
  try {
    const url = new URL(Redacted.value(database.url))
    if (url.password !== "") url.password = "***"
    return `Postgres ${url.toString()}`
  } catch {
    return "Postgres"
  }
}

/** The absolute path of a SQLite database, for messages. */
export const sqlitePath = (filename: string): string =>
  filename === ":memory:" ? filename : Path.resolve(filename)

const DEFAULT_FILE = Path.join(".cobro", "cobro.db")

/**
 * The database when `COBRO_DATABASE_URL` is unset, found as git finds `.git`: the first
 * `.cobro/cobro.db` in `cwd` or a directory above it, so that `npx cobro …` in a subfolder (say
 * `examples/`) acts on the database `npm start` made at the root; none: `./.cobro/cobro.db` in
 * `cwd`, created by the commands that may create one.
 */
export const defaultDatabase = (cwd: string, exists: (file: string) => boolean = Fs.existsSync): Database => {
  const start = Path.resolve(cwd)
  for (let dir = start; ; dir = Path.dirname(dir)) {
    const file = Path.join(dir, DEFAULT_FILE)
    if (exists(file)) return { _tag: "Sqlite", filename: dir === start ? `./${DEFAULT_FILE}` : file }
    if (Path.dirname(dir) === dir) return { _tag: "Sqlite", filename: `./${DEFAULT_FILE}` }
  }
}
