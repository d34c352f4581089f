/**
 * What an operator inspects and repairs: `cobro payments show`, `accounts set-status`,
 * `ledger verify`, `webhooks list|replay` and `sandbox codes`, `sandbox bank-account` and `sandbox bank-accounts`.
 */
import { Args, Command, Options } from "@effect/cli"
import { Ledger, Money, Payment } from "@cobro/core"
import { WebhookDeliveryRepository } from "@cobro/core/ports"
import { Console, DateTime, Effect, Option, Schema } from "effect"
import * as Admin from "../../Admin.js"
import {
  CommandFailed,
  creatingServices,
  table,
  withServices,
  printJson,
  json,
  optionalText,
  orUndefined
} from "./shared.js"

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

export const payments = Command.make("payments").pipe(
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

export const accounts = Command.make("accounts").pipe(
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

export const ledger = Command.make("ledger").pipe(
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

export const webhooks = Command.make("webhooks").pipe(
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

const sandboxUserId = Options.text("user-id").pipe(Options.withDescription("the merchant whose tests use it"))

const sandboxBankAccount = Command.make(
  "bank-account",
  {
    userId: sandboxUserId,
    cbu: optionalText("cbu", "the account's CBU or CVU (22 digits, check digits right); random when absent"),
    alias: optionalText("alias", "its alias (6-20 of a-z, 0-9, '.', '-'); random when absent"),
    holderName: optionalText("holder-name", "the holder's name; the merchant's when absent"),
    cuit: optionalText("cuit", "the holder's CUIT; the merchant's when absent"),
    json
  },
  (o) =>
    creatingServices(() =>
      Effect.gen(function* () {
        const account = yield* Admin.registerSandboxAccount({
          user_id: o.userId,
          cbu: orUndefined(o.cbu),
          alias: orUndefined(o.alias),
          holder_name: orUndefined(o.holderName),
          cuit: orUndefined(o.cuit)
        })
        if (o.json) return yield* printJson(account)
        yield* Console.log(
          table(
            ["CBU", "ALIAS", "HOLDER", "CUIT", "USER_ID"],
            [[account.cbu, account.alias, account.holder_name, account.cuit, account.user_id]],
            ""
          )
        )
      })
    )
).pipe(
  Command.withDescription(
    "register a bank account at the sandbox bank for a merchant's tests: it answers holder look-ups and receives payouts (sandbox)"
  )
)

const sandboxBankAccounts = Command.make("bank-accounts", { userId: sandboxUserId, json }, (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const accounts = yield* Admin.listSandboxAccounts(o.userId)
      if (o.json) return yield* printJson(accounts)
      yield* Console.log(
        table(
          ["CBU", "ALIAS", "HOLDER", "CUIT", "CREATED_AT"],
          accounts.map((a) => [a.cbu, a.alias, a.holder_name, a.cuit, a.created_at]),
          "the merchant has registered no sandbox bank account"
        )
      )
    })
  )
).pipe(Command.withDescription("a merchant's bank accounts at the sandbox bank (sandbox)"))

/** The sandbox commands refuse another mode before they touch the database. */
const sandboxMode = (config: { readonly mode: string }, what: string) =>
  config.mode === "sandbox"
    ? Effect.void
    : Effect.fail(
        new CommandFailed({
          message: `${what} only in sandbox mode (COBRO_MODE=sandbox); this database runs in ${config.mode} mode`
        })
      )

const sandboxPay = Command.make(
  "pay",
  {
    target: Args.text({ name: "payment_id|cvu" }).pipe(Args.withDescription("a payment's id or any CVU")),
    amount: optionalText("amount", "pesos, e.g. 1500.50; default what is left to pay"),
    json
  },
  (o) =>
    withServices((config) =>
      Effect.gen(function* () {
        yield* sandboxMode(config, "the sandbox bank sends transfers")
        const paid = yield* Admin.sandboxPay(o.target, orUndefined(o.amount))
        if (o.json) return yield* printJson(paid)
        yield* Console.log(
          [
            `sent ${paid.amount} ARS to ${paid.cvu} (${paid.target} ${paid.target_id} of ${paid.user_id})`,
            `  outcome: ${paid.outcome}${paid.reason === undefined ? "" : ` (${paid.reason})`}`,
            ...(paid.payment_status === undefined ? [] : [`  payment_status: ${paid.payment_status}`])
          ].join("\n")
        )
      })
    )
).pipe(Command.withDescription("send a sandbox transfer to a payment or CVU (sandbox)"))

const sandboxClock = Command.make(
  "clock",
  {
    move: Args.text({ name: "advance" }).pipe(
      Args.atMost(2),
      Args.withDescription("advance DURATION, e.g. advance 6d")
    ),
    to: optionalText("to", "move the clock to this ISO 8601 instant"),
    userId: sandboxUserId,
    json
  },
  (o) =>
    withServices((config) =>
      Effect.gen(function* () {
        yield* sandboxMode(config, "test clocks move")
        const move = yield* clockMove(o.move, orUndefined(o.to))
        const clock = yield* Admin.sandboxClock(o.userId, move)
        if (o.json) return yield* printJson(clock)
        yield* Console.log(
          [
            `${clock.user_id}'s clock: ${clock.now} (${clock.offset_seconds} s ahead of real time)`,
            ...(clock.expired === undefined
              ? []
              : [
                  `  expired ${clock.expired} payment(s); ${clock.webhooks_attempted} webhook delivery(ies) attempted`
                ])
          ].join("\n")
        )
      })
    )
).pipe(Command.withDescription("read or move a merchant's test clock (sandbox)"))

/** `[]` reads; `advance 6d` or `--to ISO` moves (one of them). */
const clockMove = (args: ReadonlyArray<string>, to: string | undefined) => {
  const usage =
    "give `advance DURATION` (e.g. advance 6d, 12h, 30m), or --to ISO, or neither to read the clock"
  if (args.length === 0) return Effect.succeed(to === undefined ? undefined : { to })
  if (args[0] !== "advance" || args.length !== 2 || to !== undefined)
    return Effect.fail(new CommandFailed({ message: usage }))
  return Option.match(Admin.durationSeconds(args[1]!), {
    onNone: () => Effect.fail(new CommandFailed({ message: `not a duration: ${args[1]}; ${usage}` })),
    onSome: (seconds) => Effect.succeed({ seconds })
  })
}

export const sandbox = Command.make("sandbox").pipe(
  Command.withDescription("sandbox helpers"),
  Command.withSubcommands([sandboxCodes, sandboxBankAccount, sandboxBankAccounts, sandboxPay, sandboxClock])
)
