/**
 * The `cobro` command line. Every command reads the same configuration as the server (above all
 * `COBRO_DATABASE_URL`), so it acts on the database a server uses, running or not. Commands that
 * create credentials print the secret once; `--json` prints one JSON document for scripts.
 *
 *   cobro serve
 *   cobro migrate
 *   cobro database record --mode sandbox|production --bank sandbox|bind [--json]
 *   cobro users create --name N --email E --cuit C [--user-id U] [--alias-prefix P] [--status S]
 *                      [--partner-id P] [--password-stdin] [--json]
 *   cobro users list [--after USER_ID] [--limit N] [--json]
 *   cobro users show USER_ID [--json]
 *   cobro users set-password USER_ID --password-stdin [--json]
 *   cobro users balance USER_ID [--json]
 *   cobro partners create --name N --redirect-url URL [--webhook-url URL] [--slug S] [--commission R] [--json]
 *   cobro partners list [--after PARTNER_ID] [--limit N] [--json]
 *   cobro partners set-password PARTNER_ID --password-stdin [--json]
 *   cobro payments show PAYMENT_ID [--json]
 *   cobro payouts list --user-id U [--kind K] [--cursor C] [--limit N] [--json]
 *   cobro transfers list [--status S] [--stuck-after MINUTES] [--after REFERENCE] [--limit N] [--json]
 *   cobro accounts set-status USER_ID STATUS [--json]
 *   cobro ledger verify [--json]
 *   cobro webhooks list [--status S] [--user-id U] [--after EVENT_ID] [--limit N] [--json]
 *   cobro webhooks replay EVENT_ID [--json]
 *   cobro sandbox codes [--user-id U] [--json]
 *   cobro sandbox bank-account --user-id U [--cbu C] [--alias A] [--holder-name N] [--cuit X] [--json]
 *   cobro sandbox bank-accounts --user-id U [--json]
 *   cobro bank reconcile [--since T] [--json]
 *   cobro bank balance [--json]
 *   cobro bank simulator [--port N]
 *   cobro listen [--forward-to URL] [--user-id U] [--api-url URL --client-id C --client-secret S]
 *                [--signing-secret S] [--interval SECONDS] [--all]
 *
 * The commands live in `internal/cli/` (merchants and partners; what an operator inspects and
 * repairs; what they share); this module is the tree, its help and how a failure is told.
 */
import { Command, ValidationError } from "@effect/cli"
import * as HttpServerError from "@effect/platform/HttpServerError"
import { Cause, Console, Duration, Effect, Option } from "effect"
import * as CliHelp from "./CliHelp.js"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"
import * as Storage from "./Storage.js"
import { CommandFailed, describe, isDomainError, loadFor } from "./internal/cli/shared.js"
import { partners, users } from "./internal/cli/merchants.js"
import { secondFactor } from "./internal/cli/secondFactor.js"
import { payouts } from "./internal/cli/money.js"
import { transfers } from "./internal/cli/transfers.js"
import { accounts, ledger, payments, sandbox, webhooks } from "./internal/cli/operations.js"
import { bank } from "./internal/cli/bank.js"
import { database } from "./internal/cli/database.js"
import { listen, listenOptions } from "./internal/cli/listen.js"

export { CommandFailed, Stdin, table } from "./internal/cli/shared.js"

const serve = Command.make("serve", {}, () => Effect.flatMap(ServerConfig.load, Server.run)).pipe(
  Command.withDescription("run the HTTP server and its background work (stops cleanly on SIGTERM/SIGINT)")
)

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function* () {
    const config = yield* loadFor("create")
    const applied = yield* Storage.migrate(config.database, config)
    const where = ServerConfig.describeDatabase(config.database)
    yield* Console.log(
      applied.length === 0
        ? `${where} is up to date`
        : `${where}: applied ${applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`).join(", ")}`
    )
  })
).pipe(Command.withDescription("create or upgrade the database schema (the server also does it at start)"))

const listenCommand = Command.make("listen", listenOptions, (o) =>
  listen({ ...o, interval: Duration.seconds(Math.max(1, o.interval)) })
).pipe(
  Command.withDescription(
    "forward a merchant's webhook events to a local receiver, signed, like `stripe listen`: from the local sandbox database (bare: the demo merchant's, where `npm start` runs), or through a server's API (given its URL and the merchant's credentials)"
  )
)

// ---------------------------------------------------------------------------------------------

export const command = Command.make("cobro").pipe(
  Command.withDescription("the cobro reference server and its operator commands"),
  Command.withSubcommands([
    serve,
    migrate,
    database,
    users,
    secondFactor,
    partners,
    payments,
    payouts,
    transfers,
    accounts,
    ledger,
    webhooks,
    sandbox,
    bank,
    listenCommand
  ])
)

/** Runs the command line `argv` (as `process.argv`: the first two entries are skipped). */
const app = Command.run(command, { name: "cobro", version: Server.version, executable: "cobro" })

/** The environment `serve` reads, with defaults, for its help. */
const environmentHelp = [
  "",
  "ENVIRONMENT (every command reads the same configuration)",
  ...Object.entries(ServerConfig.variableHelp).flatMap(([key, [fallback, meaning]]) => [
    `  ${ServerConfig.variables[key as keyof typeof ServerConfig.variables]} (default: ${fallback})`,
    ...CliHelp.wrap(meaning, "      ")
  ])
]

/**
 * Runs the command line `argv` (as `process.argv`: the first two entries are skipped). Help
 * (`--help`, `-h`, or a group of commands alone) is `CliHelp`'s, at most 100 columns wide.
 */
export const run = (argv: ReadonlyArray<string>) => {
  const args = argv.slice(2)
  const end = args.indexOf("--")
  const { path, descriptor } = CliHelp.find(command, end < 0 ? args : args.slice(0, end))
  const rest = (end < 0 ? args : args.slice(0, end)).slice(path.length)
  const help =
    rest.includes("--help") || rest.includes("-h") || (rest.length === 0 && CliHelp.isGroup(descriptor))
  return help
    ? Console.log(
        CliHelp.text(
          "cobro",
          Server.version,
          path,
          descriptor,
          path.join(" ") === "serve" ? environmentHelp : []
        )
      )
    : app(argv)
}

/**
 * What to tell the operator about a failed command, on stderr; none when the CLI already printed
 * it (a usage error) or the command was interrupted (a signal).
 */
export const describeFailure = (cause: Cause.Cause<unknown>): Option.Option<string> => {
  if (Cause.isInterruptedOnly(cause)) return Option.none()
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (ValidationError.isValidationError(error)) return Option.none()
    if (
      error instanceof ServerConfig.ServerConfigError ||
      error instanceof Storage.StorageError ||
      error instanceof CommandFailed
    ) {
      return Option.some(error.message)
    }
    if (isDomainError(error)) return Option.some(describe(error))
    if (error instanceof HttpServerError.ServeError) {
      const code = (error.cause as { code?: unknown } | undefined)?.code
      return Option.some(
        code === "EADDRINUSE"
          ? "cannot listen: the port is already in use (set PORT to another one)"
          : `cannot listen: ${String((error.cause as Error | undefined)?.message ?? error.cause)}`
      )
    }
  }
  return Option.some(`unexpected failure:\n${Cause.pretty(cause)}`)
}
