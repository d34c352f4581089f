/** `cobro transfers list`: outgoing transfers in flight (and stuck), or settled, oldest first. */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import * as Admin from "../../Admin.js"
import { json, optionalText, orUndefined, printJson, table, withServices } from "./shared.js"

/** `3h12m`, `45s`: an age at a glance. */
const age = (seconds: number) => {
  const d = Math.floor(seconds / 86_400)
  const h = Math.floor((seconds % 86_400) / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  return d > 0 ? `${d}d${h}h` : h > 0 ? `${h}h${m}m` : m > 0 ? `${m}m${s}s` : `${s}s`
}

const transfersList = Command.make(
  "list",
  {
    status: Options.choice("status", Admin.transferFilters).pipe(
      Options.withDescription(
        "in-flight (default: SENDING or PENDING), stuck (in flight longer than --stuck-after), sending, pending, completed, failed or all"
      ),
      Options.optional
    ),
    stuckAfter: Options.integer("stuck-after").pipe(
      Options.withDescription("minutes in flight after which a transfer is stuck (default 60)"),
      Options.optional
    ),
    after: optionalText("after", "the last reference of the previous page"),
    limit: Options.integer("limit").pipe(Options.withDescription("1-500, default 100"), Options.optional),
    json
  },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const page = yield* Admin.listTransfers({
          status: orUndefined(o.status),
          stuck_after_minutes: orUndefined(o.stuckAfter),
          after: orUndefined(o.after),
          limit: orUndefined(o.limit)
        })
        if (o.json) return yield* printJson(page)
        const filter = Option.getOrElse(o.status, () => "in-flight")
        yield* Console.log(
          table(
            ["REFERENCE", "PURPOSE", "STATUS", "AMOUNT", "DESTINATION", "AGE", "SENDS", "CHECKS", "DETAIL"],
            page.transfers.map((t) => [
              t.reference,
              t.purpose,
              t.stuck ? `${t.status} (stuck)` : t.status,
              `${t.amount} ${t.currency}`,
              t.destination,
              age(t.age_seconds),
              String(t.sends),
              String(t.checks),
              [
                ...(t.bank_transaction_id === undefined ? [] : [`bank_id=${t.bank_transaction_id}`]),
                ...(t.failure_reason === undefined ? [] : [`failure="${t.failure_reason}"`]),
                ...(t.last_error === undefined ? [] : [`last_error="${t.last_error}"`]),
                ...(t.next_check_at === undefined ? [] : [`next_check_at=${t.next_check_at}`])
              ].join("  ")
            ]),
            filter === "in-flight"
              ? "no transfer in flight"
              : filter === "stuck"
                ? "no transfer stuck"
                : "no transfers"
          ) + (page.next_after === undefined ? "" : `\nmore: --after ${page.next_after}`)
        )
      })
    )
).pipe(
  Command.withDescription(
    "outgoing transfers (schedule sweeps, split payouts), oldest first: by default those the bank has not settled"
  )
)

export const transfers = Command.make("transfers").pipe(
  Command.withDescription("outgoing transfers to the bank"),
  Command.withSubcommands([transfersList])
)
