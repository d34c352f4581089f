/**
 * `cobro bank reconcile [--since T]`: reads the bank's statement now and ingests what no
 * notification brought (asking BIND to conciliate it), printing it with what was quarantined;
 * `cobro bank balance`: the collecting account's balance at BIND; `cobro bank simulator [--port N]`: BIND's API simulated on
 * this machine (`@cobro/bank-bind/testing`), with the settings that point a server at it.
 */
import { Command, Options } from "@effect/cli"
import { BindIngress } from "@cobro/bank-bind"
import { BindSimulator } from "@cobro/bank-bind/testing"
import { Money, Reconciliation } from "@cobro/core"
import { Console, DateTime, Effect, Option } from "effect"
import { BindBank } from "@cobro/bank-bind"
import { conciliateFound } from "../bindGaps.js"
import { CommandFailed, json, printJson, table, withServices } from "./shared.js"

const since = Options.text("since").pipe(
  Options.withDescription(
    "read the statement from this time (ISO 8601, e.g. 2026-01-31T00:00:00Z) instead of where the last run ended"
  ),
  Options.optional
)

const parseSince = (text: Option.Option<string>) =>
  Option.match(text, {
    onNone: () => Effect.succeed(undefined),
    onSome: (t) =>
      Option.match(DateTime.make(t), {
        onNone: () => Effect.fail(new CommandFailed({ message: `--since: "${t}" is not an ISO 8601 time` })),
        onSome: (dt) => Effect.succeed(DateTime.toUtc(dt))
      })
  })

const wire = (report: Extract<Reconciliation.Report, { _tag: "Reconciled" }>) => ({
  account: report.account,
  from: DateTime.formatIso(report.from),
  to: DateTime.formatIso(report.to),
  listed: report.listed,
  known: report.known,
  found: report.found.map((f) => ({
    bank_transaction_id: f.bank_transaction_id,
    cvu: f.cvu,
    amount: Money.format(f.amount),
    currency: f.amount.currency,
    outcome: f.outcome,
    ...(f.target_id === undefined ? {} : { target_id: f.target_id })
  })),
  failed: report.failed,
  quarantined: report.quarantined,
  missing_at_bank: report.missing_at_bank.map((m) => ({
    bank_transaction_id: m.bank_transaction_id,
    cvu: m.cvu,
    amount: Money.format(m.amount),
    currency: m.amount.currency,
    target: m.target,
    ...(m.target_id === null ? {} : { target_id: m.target_id }),
    received_at: DateTime.formatIso(m.received_at)
  })),
  quarantine: report.quarantine.map((q) => ({ ...q, quarantined_at: DateTime.formatIso(q.quarantined_at) })),
  advanced: report.advanced
})

const reconcile = Command.make("reconcile", { since, json }, (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const from = yield* parseSince(o.since)
      const reconciliation = yield* Reconciliation.Reconciliation
      const report = yield* reconciliation
        .run({ since: from })
        .pipe(
          Effect.mapError(
            (e) => new CommandFailed({ message: `the bank's statement could not be read: ${e.message}` })
          )
        )
      if (report._tag === "Busy") {
        return yield* new CommandFailed({
          message: `another instance is reconciling ${report.account} now; try again in a moment`
        })
      }
      const conciliation = yield* conciliateFound(report)
      const conciliated = Option.match(conciliation, {
        onNone: () => ({}),
        onSome: (c) =>
          c._tag === "Answered" ? { conciliation: c.answer } : { conciliation: { error: c.error } }
      })
      if (o.json) yield* printJson({ ...wire(report), ...conciliated })
      else {
        const w = wire(report)
        yield* Console.log(
          [
            `statement of ${w.account} from ${w.from} to ${w.to}: ${w.listed} transfer(s) in, ${w.known} already received, ${w.found.length} found now, ${w.failed.length} failed, ${w.quarantined.length} quarantined, ${w.missing_at_bank.length} in our books but not at the bank`,
            table(
              ["BANK_TRANSACTION_ID", "CVU", "AMOUNT", "OUTCOME", "TARGET"],
              w.found.map((f) => [
                f.bank_transaction_id,
                f.cvu,
                `${f.amount} ${f.currency}`,
                f.outcome,
                f.target_id ?? ""
              ]),
              "no transfer was missing"
            ),
            ...w.failed.map((f) => `failed: ${f.bank_transaction_id}: ${f.error}`),
            ...w.quarantined.map(
              (q) => `quarantined: ${q.bank_transaction_id || "(no id)"}: ${q.reason}\n  ${q.body}`
            ),
            ...(w.quarantine.length > w.quarantined.length
              ? [
                  `stored quarantine (earlier runs too): ${w.quarantine.map((q) => q.bank_transaction_id || "(no id)").join(", ")}`
                ]
              : []),
            ...w.missing_at_bank.map(
              (m) =>
                `missing at the bank: ${m.bank_transaction_id}: ${m.amount} ${m.currency} to ${m.cvu} (${m.target} ${m.target_id ?? ""}), recorded ${m.received_at}`
            ),
            ...(w.advanced ? [] : ["the cursor did not move (a failure, or --since past it)"]),
            ...Option.match(conciliation, {
              onNone: () => [],
              onSome: (c) => [
                c._tag === "Answered"
                  ? `BIND conciliated ${c.answer.conciliadas.length}, already had ${c.answer.noConciliadas.length}, could not ${c.answer.conError.length} (${c.answer.conError.join(", ") || "none"})`
                  : `asking BIND to conciliate failed: ${c.error}`
              ]
            })
          ].join("\n")
        )
      }
      if (report.failed.length > 0)
        return yield* new CommandFailed({
          message: `${report.failed.length} transfer(s) could not be ingested; they are retried next run`
        })
    })
  )
).pipe(
  Command.withDescription(
    "read the bank's statement now and credit every transfer in that no notification brought"
  )
)

const port = Options.integer("port").pipe(
  Options.withDescription("the port to listen on (default 8099; 0 picks a free one)"),
  Options.withDefault(8099)
)

const notify = Options.text("notify").pipe(
  Options.withDescription(
    "the server's notification URL, e.g. http://localhost:3000/bank/bind/notifications"
  ),
  Options.optional
)

const secret = Options.text("secret").pipe(
  Options.withDescription(
    "the shared secret the notifications carry (the server's COBRO_BIND_WEBHOOK_SECRET)"
  ),
  Options.withDefault("sim-webhook-secret")
)

const simulator = Command.make("simulator", { port, notify, secret }, (o) =>
  Effect.gen(function* () {
    const sim = yield* BindSimulator.scoped({
      port: o.port,
      ...(Option.isSome(o.notify)
        ? { webhook: { url: o.notify.value, header: "x-bind-webhook-secret", secret: o.secret } }
        : {})
    })
    yield* Console.log(
      [
        `BIND simulator listening on ${sim.url}`,
        "Point a server at it (in another shell):",
        "  COBRO_BANK=bind \\",
        `  COBRO_BIND_BASE_URL=${sim.url} \\`,
        `  COBRO_BIND_TOKEN_URL=${sim.tokenUrl} \\`,
        `  COBRO_BIND_CLIENT_ID=${sim.clientId} \\`,
        `  COBRO_BIND_CLIENT_SECRET=${sim.clientSecret} \\`,
        `  COBRO_BIND_CUIT=${sim.entity.cuit} \\`,
        `  COBRO_BIND_WEBHOOK_SECRET=${o.secret} npx cobro serve`,
        Option.isSome(o.notify)
          ? `Transfers in are notified to ${o.notify.value}. Pay a CVU:`
          : `Transfers in are not notified (start with --notify http://localhost:3000${BindIngress.path}); pay a CVU:`,
        `  curl -s -X POST ${sim.url}${BindSimulator.controlPath} -d '{"cvu":"<CVU>","amount":1500}'`,
        "Ctrl-C stops it."
      ].join("\n")
    )
    return yield* Effect.never
  }).pipe(Effect.scoped)
).pipe(Command.withDescription("run a simulator of BIND PSP's API on this machine, for development"))

const balance = Command.make("balance", { json }, (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const bind = yield* Effect.serviceOption(BindBank.BindBank)
      if (Option.isNone(bind))
        return yield* new CommandFailed({ message: "the bank's balance is BIND's: set COBRO_BANK=bind" })
      const amount = yield* bind.value.balance.pipe(
        Effect.mapError(
          (e) => new CommandFailed({ message: `BIND's balance could not be read: ${e.message}` })
        )
      )
      if (o.json) yield* printJson({ amount: Money.format(amount), currency: amount.currency })
      else
        yield* Console.log(`collecting account balance at BIND: ${Money.format(amount)} ${amount.currency}`)
    })
  )
).pipe(Command.withDescription("the balance of the collecting account at BIND (Consultar saldo)"))

export const bank = Command.make("bank").pipe(
  Command.withDescription(
    "the bank behind the engine: reconciliation, the collecting account's balance, and a simulator for development"
  ),
  Command.withSubcommands([reconcile, balance, simulator])
)
