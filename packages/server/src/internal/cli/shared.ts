/**
 * What the `cobro` commands share: how a command reaches the services of the configured database
 * (and refuses a missing one when it only reads), how failures and tables are printed, and the
 * options several commands take.
 */
import { Options } from "@effect/cli"
import { Errors } from "@cobro/core"
import { Console, Context, Effect, Option, Schema } from "effect"
import * as ServerConfig from "../../ServerConfig.js"
import * as Services from "../../Services.js"
import * as Storage from "../../Storage.js"

/** A command that ran and failed in a way the operator must see (exit code 1). */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  message: Schema.String
}) {}

/** A domain error as one line: `key (field): message`. */
export const describe = (error: Errors.DomainError): string =>
  `${error.key}${error._tag === "InvalidInput" && error.field !== "body" ? ` (${error.field})` : ""}: ${error.message}`

const domainErrors = [
  Errors.NotFound,
  Errors.InvalidInput,
  Errors.Conflict,
  Errors.RequestMismatch,
  Errors.NotPermitted,
  Errors.Unauthenticated,
  Errors.Discontinued,
  Errors.ProviderFailure
] as const

export const isDomainError = (error: unknown): error is Errors.DomainError =>
  domainErrors.some((DomainError) => error instanceof DomainError)

/** The database of `config` as the operator should see it: an absolute SQLite path, a URL without password. */
const databaseName = (database: ServerConfig.Database): string =>
  database._tag === "Sqlite"
    ? `SQLite ${ServerConfig.sqlitePath(database.filename)}`
    : ServerConfig.describeDatabase(database)

/**
 * The configuration, after saying on stderr which database the command acts on. Unless `access`
 * is `"create"`, a database that does not exist (or holds no cobro schema) is refused, saying
 * where it was looked for: a command that only reads never creates an empty one, nor migrates it.
 */
export const loadFor = (access: "read" | "create") =>
  Effect.gen(function* () {
    const config = yield* ServerConfig.load
    yield* Console.error(`database: ${databaseName(config.database)}`)
    if (access === "create" || (yield* Storage.hasSchema(config.database))) return config
    const where =
      config.searchedFrom === undefined
        ? `${databaseName(config.database)} (${ServerConfig.variables.database})`
        : `.cobro/cobro.db in ${config.searchedFrom} and the directories above it (${ServerConfig.variables.database} is unset)`
    return yield* new CommandFailed({
      message: `no cobro database: looked for ${where}. Run this where the server runs, set ${ServerConfig.variables.database}, or create one with \`cobro migrate\``
    })
  })

/**
 * Runs `command` over the services of the configured mode and database; domain errors become
 * `CommandFailed` with their key and message. Only commands that create records pass `"create"`;
 * the others refuse a database that does not exist (see `loadFor`).
 */
export const withServices = <A, E>(
  command: (config: ServerConfig.ServerConfig) => Effect.Effect<A, E, Services.Services>,
  access: "read" | "create" = "read"
) =>
  Effect.gen(function* () {
    const config = yield* loadFor(access)
    return yield* command(config).pipe(
      Effect.mapError((error): CommandFailed | Exclude<E, Errors.DomainError> =>
        isDomainError(error)
          ? new CommandFailed({ message: describe(error) })
          : (error as Exclude<E, Errors.DomainError>)
      ),
      Effect.provide(Services.layer(config))
    )
  })

/** `withServices` for a command that may create the database (it creates records). */
export const creatingServices = <A, E>(
  command: (config: ServerConfig.ServerConfig) => Effect.Effect<A, E, Services.Services>
) => withServices(command, "create")

export const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

export const json = Options.boolean("json").pipe(Options.withDescription("print the result as JSON"))

export const optionalText = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

export const orUndefined = <A>(option: Option.Option<A>): A | undefined => Option.getOrUndefined(option)

/**
 * Rows under a header row, each column padded to its widest cell (two spaces between columns);
 * `empty` instead when there are no rows.
 */
export const table = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  empty: string
): string => {
  if (rows.length === 0) return empty
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  return [header, ...rows]
    .map((r) =>
      header
        .map((_, i) => (r[i] ?? "").padEnd(widths[i]!))
        .join("  ")
        .trimEnd()
    )
    .join("\n")
}

/**
 * What the CLI reads from standard input (`--password-stdin`): the whole of it, as `docker login
 * --password-stdin` does. A terminal is refused: what is typed there would be echoed.
 */
export class Stdin extends Context.Reference<Stdin>()("@cobro/server/Cli/Stdin", {
  defaultValue: (): { readonly read: Effect.Effect<string, CommandFailed> } => ({
    read: Effect.suspend(() =>
      process.stdin.isTTY
        ? Effect.fail(
            new CommandFailed({
              message:
                "--password-stdin reads the password from a pipe, e.g. printf '%s\\n' \"$PW\" | cobro users create …"
            })
          )
        : Effect.tryPromise({
            try: async () => {
              const chunks: Array<Buffer> = []
              for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
              return Buffer.concat(chunks).toString("utf8")
            },
            catch: (error) =>
              new CommandFailed({ message: `cannot read the password from stdin: ${String(error)}` })
          })
    )
  })
}) {}

/** The password piped in: its first line without the line break. */
export const readPassword = Effect.flatMap(Stdin, (stdin) => stdin.read).pipe(
  Effect.map((text) => text.split(/\r?\n/)[0] ?? "")
)

export const passwordStdin = Options.boolean("password-stdin").pipe(
  Options.withDescription("read a password for the onboarding page's sign-in from stdin (its first line)")
)
