/**
 * The `cobro` command line. Every command reads the same configuration as the server (above all
 * `COBRO_DATABASE_URL`), so it acts on the database a server uses, running or not. Commands that
 * create credentials print the secret once; `--json` prints one JSON document for scripts.
 *
 *   cobro serve
 *   cobro migrate
 *   cobro users create --name N --email E --cuit C [--user-id U] [--alias-prefix P] [--status S]
 *                      [--partner-id P] [--json]
 *   cobro partners create --name N --redirect-url URL [--webhook-url URL] [--slug S] [--commission R] [--json]
 *   cobro accounts set-status USER_ID STATUS [--json]
 *   cobro ledger verify [--json]
 *   cobro webhooks list [--status S] [--user-id U] [--after EVENT_ID] [--limit N] [--json]
 *   cobro webhooks replay EVENT_ID [--json]
 *   cobro sandbox codes [--user-id U] [--json]
 */
import { Args, Command, Options, ValidationError } from "@effect/cli"
import * as HttpServerError from "@effect/platform/HttpServerError"
import { Errors, Ledger, WebhookDeliveryRepository } from "@cobro/core"
import { Cause, Console, DateTime, Effect, Option, Schema } from "effect"
import * as Admin from "./Admin.js"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"
import * as Services from "./Services.js"
import * as Storage from "./Storage.js"

/** A command that ran and failed in a way the operator must see (exit code 1). */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  message: Schema.String
}) {}

/** A domain error as one line: `key (field): message`. */
const describe = (error: Errors.DomainError): string =>
  `${error.key}${error._tag === "InvalidInput" && error.field !== "body" ? ` (${error.field})` : ""}: ${error.message}`

const domainErrors = [
  Errors.NotFound,
  Errors.InvalidInput,
  Errors.Conflict,
  Errors.Unprocessable,
  Errors.Forbidden,
  Errors.Unauthorized,
  Errors.Unavailable,
  Errors.ProviderFailure
] as const

const isDomainError = (error: unknown): error is Errors.DomainError =>
  domainErrors.some((DomainError) => error instanceof DomainError)

/**
 * Runs `command` over the services of the configured mode and database; domain errors become
 * `CommandFailed` with their key and message.
 */
const withServices = <A, E>(
  command: (config: ServerConfig.ServerConfig) => Effect.Effect<A, E, Services.Services>
) =>
  Effect.gen(function* () {
    const config = yield* ServerConfig.load
    return yield* command(config).pipe(
      Effect.mapError((error) =>
        isDomainError(error) ? new CommandFailed({ message: describe(error) }) : error
      ),
      Effect.provide(Services.layer(config))
    )
  })

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const json = Options.boolean("json").pipe(Options.withDescription("print the result as JSON"))

const optionalText = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

const orUndefined = <A>(option: Option.Option<A>): A | undefined => Option.getOrUndefined(option)

// ---------------------------------------------------------------------------------------------

const serve = Command.make("serve", {}, () => Effect.flatMap(ServerConfig.load, Server.run)).pipe(
  Command.withDescription("run the HTTP server and its background work (stops cleanly on SIGTERM/SIGINT)")
)

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function* () {
    const config = yield* ServerConfig.load
    const applied = yield* Storage.migrate(config.database)
    const where = ServerConfig.describeDatabase(config.database)
    yield* Console.log(
      applied.length === 0
        ? `${where} is up to date`
        : `${where}: applied ${applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`).join(", ")}`
    )
  })
).pipe(Command.withDescription("create or upgrade the database schema (the server also does it at start)"))

// ---------------------------------------------------------------------------------------------

const usersCreate = Command.make(
  "create",
  {
    name: Options.text("name").pipe(Options.withDescription("the merchant's display name")),
    email: Options.text("email").pipe(Options.withDescription("contact e-mail, unique")),
    cuit: Options.text("cuit").pipe(Options.withDescription("CUIT, with or without dashes")),
    userId: optionalText("user-id", "the user id (letters, digits, _); generated when absent"),
    aliasPrefix: optionalText("alias-prefix", "prefix of fixed customers' aliases (1-8 of a-z 0-9 _)"),
    status: Options.choice("status", ["PENDING", "ACTIVE", "REJECTED", "SUSPENDED"]).pipe(
      Options.withDescription("initial account status (default PENDING)"),
      Options.optional
    ),
    partnerId: optionalText("partner-id", "the partner that onboards the user"),
    json
  },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const created = yield* Admin.createUser({
          name: o.name,
          email: o.email,
          cuit: o.cuit,
          user_id: orUndefined(o.userId),
          alias_prefix: orUndefined(o.aliasPrefix),
          status: orUndefined(o.status),
          partner_id: orUndefined(o.partnerId)
        })
        if (o.json) return yield* printJson(created)
        yield* Console.log(
          [
            `created user ${created.user_id}`,
            `  client_id:     ${created.client_id}`,
            `  client_secret: ${created.client_secret}`,
            "  (the secret is shown only now; it is stored sealed)"
          ].join("\n")
        )
      })
    )
).pipe(Command.withDescription("create a merchant and its API credentials"))

const users = Command.make("users").pipe(
  Command.withDescription("merchants"),
  Command.withSubcommands([usersCreate])
)

const partnersCreate = Command.make(
  "create",
  {
    name: Options.text("name").pipe(Options.withDescription("the partner's display name")),
    redirectUrl: Options.text("redirect-url").pipe(
      Options.withDescription("where onboarding sends the user back (exact match)")
    ),
    webhookUrl: optionalText("webhook-url", "where account events are sent"),
    slug: optionalText("slug", "short name; derived from the name when absent"),
    commission: Options.float("commission").pipe(
      Options.withDescription("the partner's commission, a fraction between 0 and 1"),
      Options.optional
    ),
    json
  },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const created = yield* Admin.createPartner({
          name: o.name,
          redirect_url: o.redirectUrl,
          webhook_url: orUndefined(o.webhookUrl),
          slug: orUndefined(o.slug),
          commission: orUndefined(o.commission)
        })
        if (o.json) {
          return yield* printJson({
            partner_id: created.partner_id,
            client_id: created.client_id,
            client_secret: created.client_secret
          })
        }
        yield* Console.log(
          [
            `created partner ${created.partner_id} (${created.slug})`,
            `  client_id:     ${created.client_id}`,
            `  client_secret: ${created.client_secret}`,
            "  (the secret is shown only now; it is stored sealed)"
          ].join("\n")
        )
      })
    )
).pipe(Command.withDescription("register a partner (onboarding and partner tokens)"))

const partners = Command.make("partners").pipe(
  Command.withDescription("partners"),
  Command.withSubcommands([partnersCreate])
)

const accountsSetStatus = Command.make(
  "set-status",
  {
    userId: Args.text({ name: "user_id" }),
    status: Args.text({ name: "STATUS" }).pipe(
      Args.withDescription("PENDING, ACTIVE, REJECTED or SUSPENDED")
    ),
    json
  },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const result = yield* Admin.setStatus(o.userId, o.status)
        if (o.json) return yield* printJson(result)
        yield* Console.log(`${result.user_id} is ${result.account_status}`)
      })
    )
).pipe(Command.withDescription("verify, suspend or reinstate an account"))

const accounts = Command.make("accounts").pipe(
  Command.withDescription("merchant accounts"),
  Command.withSubcommands([accountsSetStatus])
)

const ledgerVerify = Command.make("verify", { json }, (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const ledger = yield* Ledger.Ledger
      const report = yield* ledger.verify()
      if (o.json) {
        yield* printJson({ ok: report.problems.length === 0, ...report })
      } else if (report.problems.length === 0) {
        yield* Console.log(
          `ledger OK: ${report.entries} entries, ${report.accounts} accounts, every invariant holds`
        )
      } else {
        yield* Console.log(
          [`ledger has ${report.problems.length} problem(s):`, ...report.problems.map((p) => `  ${p}`)].join(
            "\n"
          )
        )
      }
      if (report.problems.length > 0) {
        return yield* new CommandFailed({ message: `the ledger has ${report.problems.length} problem(s)` })
      }
    })
  )
).pipe(Command.withDescription("check every ledger invariant (exit code 1 when one is broken)"))

const ledger = Command.make("ledger").pipe(
  Command.withDescription("the double-entry books"),
  Command.withSubcommands([ledgerVerify])
)

const encodeDelivery = Schema.encodeSync(WebhookDeliveryRepository.WebhookDelivery)

/** One delivery: a pending one that has failed says why and when it is tried again. */
const deliveryLine = (d: WebhookDeliveryRepository.WebhookDelivery) =>
  [
    d.event_id,
    d.status.padEnd(9),
    `attempts=${d.attempts}`,
    d.type,
    d.webhook_url,
    ...(d.last_error === null ? [] : [`last_error="${d.last_error}"`]),
    ...(d.status === "pending" && d.attempts > 0 && d.next_attempt_at !== null
      ? [`next_attempt_at=${DateTime.formatIso(d.next_attempt_at)}`]
      : [])
  ].join("  ")

const webhooksList = Command.make(
  "list",
  {
    status: Options.choice("status", ["pending", "delivered", "dead"]).pipe(Options.optional),
    userId: optionalText("user-id", "only this merchant's events"),
    after: optionalText("after", "the last event id of the previous page"),
    limit: Options.integer("limit").pipe(Options.withDescription("1-500, default 100"), Options.optional),
    json
  },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const deliveries = yield* Admin.listWebhooks({
          status: orUndefined(o.status),
          user_id: orUndefined(o.userId),
          after: orUndefined(o.after),
          limit: orUndefined(o.limit)
        })
        if (o.json) return yield* printJson(deliveries.map((d) => encodeDelivery(d)))
        yield* Console.log(
          deliveries.length === 0 ? "no webhook deliveries" : deliveries.map(deliveryLine).join("\n")
        )
      })
    )
).pipe(Command.withDescription("list webhook deliveries by event id"))

const webhooksReplay = Command.make("replay", { eventId: Args.text({ name: "event_id" }), json }, (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const delivery = yield* Admin.replayWebhook(o.eventId)
      if (o.json) return yield* printJson(encodeDelivery(delivery))
      yield* Console.log(
        `${delivery.event_id} will be sent again now (same event id) to ${delivery.webhook_url}`
      )
    })
  )
).pipe(Command.withDescription("send an event again from the start of its retry schedule"))

const webhooks = Command.make("webhooks").pipe(
  Command.withDescription("webhook deliveries"),
  Command.withSubcommands([webhooksList, webhooksReplay])
)

const sandboxCodes = Command.make(
  "codes",
  { userId: optionalText("user-id", "only this merchant's verifications"), json },
  (o) =>
    withServices((config) =>
      Effect.gen(function* () {
        if (config.mode !== "sandbox") {
          return yield* new CommandFailed({
            message: "sandbox codes exist only in sandbox mode (COBRO_MODE=sandbox)"
          })
        }
        const codes = yield* Admin.sandboxCodes(orUndefined(o.userId))
        if (o.json) return yield* printJson(codes)
        yield* Console.log(
          codes.length === 0
            ? "no payout-account verification is waiting for a code"
            : codes
                .map((c) => `${c.request_id}  user=${c.user_id}  code=${c.code}  expires=${c.expires_at}`)
                .join("\n")
        )
      })
    )
).pipe(Command.withDescription("the 2FA codes of open payout-account verifications (sandbox)"))

const sandbox = Command.make("sandbox").pipe(
  Command.withDescription("sandbox helpers"),
  Command.withSubcommands([sandboxCodes])
)

export const command = Command.make("cobro").pipe(
  Command.withDescription("the cobro reference server and its operator commands"),
  Command.withSubcommands([serve, migrate, users, partners, accounts, ledger, webhooks, sandbox])
)

/** Runs the command line `argv` (as `process.argv`: the first two entries are skipped). */
export const run = Command.run(command, { name: "cobro", version: Server.version, executable: "cobro" })

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
