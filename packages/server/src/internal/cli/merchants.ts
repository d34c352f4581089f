/** `cobro users …` and `cobro partners …`: merchants and partners, their credentials and sign-in. */
import { Args, Command, Options } from "@effect/cli"
import { Partner, User } from "@cobro/core"
import { BigDecimal, Config, Console, DateTime, Effect, Option, Schema } from "effect"
import * as Admin from "../../Admin.js"
import * as ServerConfig from "../../ServerConfig.js"
import type * as Services from "../../Services.js"
import { usersBalance } from "./money.js"
import {
  CommandFailed,
  table,
  withServices,
  creatingServices,
  printJson,
  json,
  optionalText,
  orUndefined,
  readPassword,
  passwordStdin
} from "./shared.js"

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

/**
 * `set-password ID --password-stdin`: the password read from stdin only (an argument would stay
 * in shell history), set by `set`, answered with `said` or the result as JSON.
 */
const setPasswordCommand = <A, E>(
  argument: string,
  who: string,
  set: (id: string, password: string) => Effect.Effect<A, E, Services.Services>,
  said: (result: A) => string
) =>
  Command.make(
    "set-password",
    {
      id: Args.text({ name: argument }).pipe(Args.withDescription(who)),
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
          const result = yield* set(o.id, yield* readPassword)
          if (o.json) return yield* printJson(result)
          yield* Console.log(said(result))
        })
      )
  )

const usersSetPassword = setPasswordCommand(
  "user_id",
  "the merchant",
  Admin.setPassword,
  (result) => `${result.user_id} can sign in on the onboarding page with the new password`
).pipe(
  Command.withDescription(
    "set the password a merchant signs in with on the onboarding page and the dashboard"
  )
)

const usersRotateSecret = Command.make(
  "rotate-secret",
  { userId: Options.text("user-id").pipe(Options.withDescription("the merchant")), json },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const rotated = yield* Admin.rotateSecret(o.userId)
        if (o.json) return yield* printJson(rotated)
        yield* Console.log(
          [
            `new secret for user ${rotated.user_id}`,
            `  client_id:     ${rotated.client_id}`,
            `  client_secret: ${rotated.client_secret}`,
            "  (shown only now; the old secret and the merchant's tokens no longer work)"
          ].join("\n")
        )
      })
    )
).pipe(Command.withDescription("replace a merchant's client secret; the old one and its tokens stop at once"))

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

export const users = Command.make("users").pipe(
  Command.withDescription("merchants"),
  Command.withSubcommands([
    usersCreate,
    usersList,
    usersShow,
    usersSetPassword,
    usersRotateSecret,
    usersBalance
  ])
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

const partnersSetPassword = setPasswordCommand(
  "partner_id",
  "the partner",
  Admin.setPartnerPassword,
  (result) =>
    `${result.partner_id} can sign in on the dashboard (/dashboard/sign-in/partner) with its client id and the new password`
).pipe(Command.withDescription("set the password a partner signs in with on the dashboard"))

export const partners = Command.make("partners").pipe(
  Command.withDescription("partners"),
  Command.withSubcommands([partnersCreate, partnersList, partnersSetPassword])
)
