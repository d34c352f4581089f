import { Config, Effect } from "effect"
import { prefix, start } from "./host.js"

const port = await Effect.runPromise(Config.port("PORT").pipe(Config.withDefault(3001)))
const host = await start(port)

console.log(`host listening on ${host.url} (GET /health); cobro mounted at ${host.url}${prefix}`)
console.log(`API reference: ${host.url}${prefix}/docs`)
console.log("demo merchant:", JSON.stringify(host.merchant, null, 2))
console.log(
  `get a token: curl -s -X POST ${host.url}${prefix}/users/${host.merchant.user_id}/tokens ` +
    `-H 'content-type: application/json' ` +
    `-d '{"client_id":"${host.merchant.client_id}","client_secret":"${host.merchant.client_secret}"}'`
)

const shutdown = () => {
  host.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error)
      process.exit(1)
    }
  )
}
process.once("SIGINT", shutdown)
process.once("SIGTERM", shutdown)
