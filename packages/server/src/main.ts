/**
 * The `cobro` executable: the command line under `NodeRuntime.runMain`, which turns SIGTERM and
 * SIGINT into an interruption (a clean shutdown, exit code 0) and a failure into exit code 1.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Option } from "effect"
import * as Cli from "./Cli.js"

const program = Cli.run(process.argv).pipe(
  Effect.tapErrorCause((cause) =>
    Option.match(Cli.describeFailure(cause), {
      onNone: () => Effect.void,
      onSome: (message) => Console.error(`cobro: ${message}`)
    })
  ),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
