/**
 * `cobro database record --mode M --bank B`: says what a database from before the record of its
 * mode is, when its contents do not tell (`DatabaseMode.decide`); a recorded database keeps its mode.
 */
import { Command, Options } from "@effect/cli"
import { Console, DateTime, Effect } from "effect"
import * as DatabaseMode from "../../DatabaseMode.js"
import { banks, describeDatabase } from "../../ServerConfig.js"
import * as Storage from "../../Storage.js"
import { json, loadFor, printJson } from "./shared.js"

const mode = Options.choice("mode", ["sandbox", "production"] as const).pipe(
  Options.withDescription("what the database is: sandbox or production")
)

const bank = Options.choice("bank", banks).pipe(
  Options.withDescription("the bank it runs on: sandbox or bind (BIND PSP)")
)

const record = Command.make("record", { mode, bank, json }, (o) =>
  Effect.gen(function* () {
    const config = yield* loadFor("read")
    const { recorded, already } = yield* Storage.record(config.database, { mode: o.mode, bank: o.bank })
    if (o.json)
      return yield* printJson({
        mode: recorded.mode,
        bank: recorded.bank,
        recorded_at: DateTime.formatIso(recorded.recordedAt),
        recorded_by: recorded.recordedBy,
        already_recorded: already
      })
    yield* Console.log(
      `${describeDatabase(config.database)} ${already ? "is already recorded as" : "is now recorded as"} a ${recorded.mode} database on ${DatabaseMode.bankName(recorded.bank)}`
    )
  })
).pipe(
  Command.withDescription(
    "record the mode and bank of a database created before cobro recorded them; a recorded database keeps its own"
  )
)

export const database = Command.make("database").pipe(
  Command.withDescription("what the database is: its mode and bank"),
  Command.withSubcommands([record])
)
