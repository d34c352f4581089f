/**
 * The `cobro` command line. Every command reads the same configuration as the server (above all
 * `COBRO_DATABASE_URL`), so it acts on the database a server uses, running or not. Commands that
 * create credentials print the secret once; `--json` prints one JSON document for scripts.
 *
 *   cobro serve
 *   cobro migrate
 *   cobro users create --name N --email E --cuit C [--user-id U] [--alias-prefix P] [--status S]
 *                      [--partner-id P] [--password-stdin] [--json]
 *   cobro users list [--after USER_ID] [--limit N] [--json]
 *   cobro users show USER_ID [--json]
 *   cobro users set-password USER_ID --password-stdin [--json]
 *   cobro partners create --name N --redirect-url URL [--webhook-url URL] [--slug S] [--commission R] [--json]
 *   cobro partners list [--after PARTNER_ID] [--limit N] [--json]
 *   cobro payments show PAYMENT_ID [--json]
 *   cobro accounts set-status USER_ID STATUS [--json]
 *   cobro ledger verify [--json]
 *   cobro webhooks list [--status S] [--user-id U] [--after EVENT_ID] [--limit N] [--json]
 *   cobro webhooks replay EVENT_ID [--json]
 *   cobro sandbox codes [--user-id U] [--json]
 */
import { Args, Command, Options, ValidationError } from "@effect/cli"
import * as HttpServerError from "@effect/platform/HttpServerError"
import { Errors, Ledger, Money, Partner, Payment, User, WebhookDeliveryRepository } from "@cobro/core"
import { BigDecimal, Cause, Config, Console, Context, DateTime, Effect, Option, Schema } from "effect"
import * as Admin from "./Admin.js"
import * as CliHelp from "./CliHelp.js"
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
const loadFor = (access: "read" | "create") =>
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
const withServices = <A, E>(
  command: (config: ServerConfig.ServerConfig) => Effect.Effect<A, E, Services.Services>,
  access: "read" | "create" = "read"
) =>
  Effect.gen(function* () {
    const config = yield* loadFor(access)
    return yield* command(config).pipe(
      Effect.mapError((error) =>
        isDomainError(error) ? new CommandFailed({ message: describe(error) }) : error
      ),
      Effect.provide(Services.layer(config))
    )
  })

/** `withServices` for a command that may create the database (it creates records). */
const creatingServices = <A, E>(
  command: (config: ServerConfig.ServerConfig) => Effect.Effect<A, E, Services.Services>
) => withServices(command, "create")

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const json = Options.boolean("json").pipe(Options.withDescription("print the result as JSON"))

const optionalText = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

const orUndefined = <A>(option: Option.Option<A>): A | undefined => Option.getOrUndefined(option)

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
const readPassword = Effect.flatMap(Stdin, (stdin) => stdin.read).pipe(
  Effect.map((text) => text.split(/\r?\n/)[0] ?? "")
)

const passwordStdin = Options.boolean("password-stdin").pipe(
  Options.withDescription("read a password for the onboarding page's sign-in from stdin (its first line)")
)

// ---------------------------------------------------------------------------------------------

const serve = Command.make("serve", {}, () => Effect.flatMap(ServerConfig.load, Server.run)).pipe(
  Command.withDescription("run the HTTP server and its background work (stops cleanly on SIGTERM/SIGINT)")
)

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function* () {
    const config = yield* loadFor("create")
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
    passwordStdin,
    json
  },
  (o) =>
    creatingServices(() =>
      Effect.gen(function* () {
        const password = o.passwordStdin ? yield* readPassword : undefined
        const created = yield* Admin.createUser({
          password,
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
            "  (the secret is shown only now; it is stored sealed)",
            ...(o.passwordStdin ? ["  password set: the merchant can sign in on the onboarding page"] : [])
          ].join("\n")
        )
      })
    )
).pipe(Command.withDescription("create a merchant and its API credentials"))

const usersSetPassword = Command.make(
  "set-password",
  {
    userId: Args.text({ name: "user_id" }).pipe(Args.withDescription("the merchant")),
    passwordStdin: passwordStdin.pipe(Options.withDescription("read the password from stdin (required)")),
    json
  },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        if (!o.passwordStdin) {
          return yield* new CommandFailed({
            message:
              "give the password on stdin with --password-stdin (an argument would stay in shell history)"
          })
        }
        const result = yield* Admin.setPassword(o.userId, yield* readPassword)
        if (o.json) return yield* printJson(result)
        yield* Console.log(`${result.user_id} can sign in on the onboarding page with the new password`)
      })
    )
).pipe(Command.withDescription("set the password a merchant signs in with on the onboarding page"))

const encodeUser = Schema.encodeSync(User.User)

const userJson = (view: Admin.UserView) => ({
  ...encodeUser(view.user),
  client_id: view.client_id,
  password_set: view.password_set
})

const listOptions = (what: string) => ({
  after: optionalText("after", `the last ${what} id of the previous page`),
  limit: Options.integer("limit").pipe(Options.withDescription("1-500, default 100"), Options.optional),
  json
})

const usersList = Command.make("list", listOptions("user"), (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const views = yield* Admin.listUsers({ after: orUndefined(o.after), limit: orUndefined(o.limit) })
      if (o.json) return yield* printJson(views.map(userJson))
      yield* Console.log(
        table(
          ["USER_ID", "STATUS", "NAME", "EMAIL", "CUIT", "PARTNER_ID", "PASSWORD"],
          views.map(({ password_set, user }) => [
            user.user_id,
            user.account_status,
            user.name,
            user.email,
            user.cuit,
            user.partner_id ?? "-",
            password_set ? "yes" : "no"
          ]),
          "no users"
        )
      )
    })
  )
).pipe(Command.withDescription("list merchants by user id"))

const usersShow = Command.make(
  "show",
  { userId: Args.text({ name: "user_id" }).pipe(Args.withDescription("the merchant")), json },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const view = yield* Admin.showUser(o.userId)
        if (o.json) return yield* printJson(userJson(view))
        const { user } = view
        yield* Console.log(
          [
            ["user_id", user.user_id],
            ["name", user.name],
            ["email", user.email],
            ["cuit", user.cuit],
            ["status", user.account_status],
            ["alias_prefix", user.alias_prefix ?? "-"],
            ["partner_id", user.partner_id ?? "-"],
            ["client_id", view.client_id ?? "-"],
            ["password", view.password_set ? "set (can sign in on the onboarding page)" : "not set"],
            ["created", DateTime.formatIso(user.creation_timestamp)]
          ]
            .map(([k, v]) => `${`${k}:`.padEnd(14)}${v}`)
            .join("\n")
        )
      })
    )
).pipe(Command.withDescription("one merchant's account"))

const users = Command.make("users").pipe(
  Command.withDescription("merchants"),
  Command.withSubcommands([usersCreate, usersList, usersShow, usersSetPassword])
)

/**
 * Where a partner sends its users: the hosted onboarding page at the server's public URL. Without
 * `COBRO_PUBLIC_URL` that is the server's own address on this machine (`http://localhost:PORT`),
 * which the CLI prints with a warning on stderr.
 */
const onboardingUrls = (config: ServerConfig.ServerConfig) =>
  Effect.gen(function* () {
    const set = yield* Config.option(Config.string(ServerConfig.variables.publicUrl)).pipe(
      Effect.map(Option.exists((value) => value.trim() !== "")),
      Effect.orElseSucceed(() => false)
    )
    if (!set) {
      yield* Console.error(
        `note: ${ServerConfig.variables.publicUrl} is not set, so the onboarding URL is this machine's ${config.publicUrl}; set it to the address users reach`
      )
    }
    return (partnerId: string) => `${config.publicUrl}/authorize?partner_id=${encodeURIComponent(partnerId)}`
  })

const encodePartner = Schema.encodeSync(Partner.Partner)

/** A partner for `--json`: everything but the sealed secret. */
const partnerJson = (partner: Partner.Partner, onboarding_url: string) => {
  const { client_secret_sealed: _, ...rest } = encodePartner(partner)
  return { ...rest, onboarding_url }
}

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
    creatingServices((config) =>
      Effect.gen(function* () {
        const created = yield* Admin.createPartner({
          name: o.name,
          redirect_url: o.redirectUrl,
          webhook_url: orUndefined(o.webhookUrl),
          slug: orUndefined(o.slug),
          commission: orUndefined(o.commission)
        })
        const onboarding = (yield* onboardingUrls(config))(created.partner_id)
        if (o.json) {
          return yield* printJson({
            partner_id: created.partner_id,
            client_id: created.client_id,
            client_secret: created.client_secret,
            onboarding_url: onboarding
          })
        }
        yield* Console.log(
          [
            `created partner ${created.partner_id} (${created.slug})`,
            `  client_id:      ${created.client_id}`,
            `  client_secret:  ${created.client_secret}`,
            "  (the secret is shown only now; it is stored sealed)",
            `  onboarding URL: ${onboarding}`,
            "  (send users there; add &state=… and &referred_user_id=… as you need)"
          ].join("\n")
        )
      })
    )
).pipe(Command.withDescription("register a partner (onboarding and partner tokens)"))

const partnersList = Command.make("list", listOptions("partner"), (o) =>
  withServices((config) =>
    Effect.gen(function* () {
      const found = yield* Admin.listPartners({ after: orUndefined(o.after), limit: orUndefined(o.limit) })
      const urlOf = found.length === 0 ? () => "" : yield* onboardingUrls(config)
      const rows = found.map((p) => [p, urlOf(p.partner_id)] as const)
      if (o.json) return yield* printJson(rows.map(([p, url]) => partnerJson(p, url)))
      yield* Console.log(
        table(
          ["PARTNER_ID", "SLUG", "NAME", "COMMISSION", "REDIRECT_URL", "WEBHOOK_URL", "ONBOARDING_URL"],
          rows.map(([p, url]) => [
            p.partner_id,
            p.slug,
            p.name,
            BigDecimal.format(p.commission),
            p.redirect_url,
            p.webhook_url ?? "-",
            url
          ]),
          "no partners"
        )
      )
    })
  )
).pipe(Command.withDescription("list partners by partner id, with their onboarding URLs"))

const partners = Command.make("partners").pipe(
  Command.withDescription("partners"),
  Command.withSubcommands([partnersCreate, partnersList])
)

const encodePayment = Schema.encodeSync(Payment.Payment)

/** `1500.00 ARS`: the amount as the API writes it, and its currency. */
const amount = (money: Money.Money) => `${Money.format(money)} ${money.currency}`

const paymentsShow = Command.make(
  "show",
  { paymentId: Args.text({ name: "payment_id" }).pipe(Args.withDescription("the payment's id")), json },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const payment = yield* Admin.showPayment(o.paymentId)
        if (o.json) {
          const { creation_request: _, ...wire } = encodePayment(payment)
          return yield* printJson(wire)
        }
        const quote = payment.quotes[0]
        yield* Console.log(
          [
            ["id", payment.id],
            ["user_id", payment.user_id],
            ["status", payment.payment_status],
            ["price", amount(payment.price)],
            ["to pay", quote === undefined ? "-" : amount(payment.quoteAmount)],
            ["cvu", quote?.address ?? "-"],
            ["alias", quote?.alias ?? "-"],
            ["received", `${amount(payment.totalReceived)} in ${payment.transactions.length} transfer(s)`],
            ["external_id", payment.external_id],
            ["created", DateTime.formatIso(payment.creation_timestamp)],
            ["expires", DateTime.formatIso(payment.expiration_timestamp)],
            ["payment_url", payment.payment_url]
          ]
            .map(([k, v]) => `${`${k}:`.padEnd(13)}${v}`)
            .join("\n")
        )
      })
    )
).pipe(Command.withDescription("one payment of any merchant, by id"))

const payments = Command.make("payments").pipe(
  Command.withDescription("payments"),
  Command.withSubcommands([paymentsShow])
)

const accountsSetStatus = Command.make(
  "set-status",
  {
    userId: Args.text({ name: "user_id" }).pipe(Args.withDescription("the merchant")),
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
const deliveryRow = (d: WebhookDeliveryRepository.WebhookDelivery) => [
  d.event_id,
  d.status,
  String(d.attempts),
  d.type,
  d.webhook_url,
  [
    ...(d.last_error === null ? [] : [`last_error="${d.last_error}"`]),
    ...(d.status === "pending" && d.attempts > 0 && d.next_attempt_at !== null
      ? [`next_attempt_at=${DateTime.formatIso(d.next_attempt_at)}`]
      : [])
  ].join("  ")
]

const webhooksList = Command.make(
  "list",
  {
    status: Options.choice("status", ["pending", "delivered", "dead"]).pipe(
      Options.withDescription("only deliveries in this state"),
      Options.optional
    ),
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
          table(
            ["EVENT_ID", "STATUS", "ATTEMPTS", "TYPE", "WEBHOOK_URL", "DETAIL"],
            deliveries.map(deliveryRow),
            "no webhook deliveries"
          )
        )
      })
    )
).pipe(Command.withDescription("list webhook deliveries by event id"))

const webhooksReplay = Command.make(
  "replay",
  { eventId: Args.text({ name: "event_id" }).pipe(Args.withDescription("the event to send again")), json },
  (o) =>
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
          table(
            ["REQUEST_ID", "USER_ID", "CODE", "EXPIRES_AT"],
            codes.map((c) => [c.request_id, c.user_id, c.code, c.expires_at]),
            "no payout-account verification is waiting for a code"
          )
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
  Command.withSubcommands([serve, migrate, users, partners, payments, accounts, ledger, webhooks, sandbox])
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
