import { Effect } from "effect"
import { runPaymentExample } from "./payment.js"

Effect.runPromise(runPaymentExample).then(
  (result) => console.log(JSON.stringify(result, null, 2)),
  (error) => {
    console.error(error)
    process.exitCode = 1
  }
)
