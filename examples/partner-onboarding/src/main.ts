/**
 * cobro and a partner's site on loopback ports; open the site in a browser and connect a merchant:
 *
 *   npm start -w @cobro/example-partner-onboarding      (COBRO_PORT=3000, PARTNER_PORT=4000)
 *
 * When a merchant has connected, an operator "verifies" the account (the sandbox does it at once)
 * and the partner creates a payment for the merchant with its token; the output narrates each step.
 */
import { Config, Effect } from "effect"
import { startCobro } from "./cobro.js"
import { mask, startPartnerSite } from "./partner.js"

const ports = await Effect.runPromise(
  Config.all({
    cobro: Config.port("COBRO_PORT").pipe(Config.withDefault(3000)),
    partner: Config.port("PARTNER_PORT").pipe(Config.withDefault(4000))
  })
)

const say = (who: string) => (line: string) => console.log(`[${who}] ${line}`)

const cobro = await startCobro(ports.cobro)
say("cobro")(`API and hosted pages on ${cobro.url} (reference: ${cobro.url}/docs)`)

let orders = 0
const site = await startPartnerSite({
  port: ports.partner,
  cobroUrl: cobro.url,
  register: async (redirectUrl) => {
    const credentials = await cobro.registerPartner({ name: "Tienda Socia", redirect_url: redirectUrl })
    say("support")(`registered partner ${credentials.partner_id} (client_id ${credentials.client_id})`)
    say("support")(`  redirect URL ${redirectUrl}`)
    return credentials
  },
  log: say("partner"),
  onConnected: async (connection) => {
    say("partner")(`${connection.user_id} connected; token ${mask(connection.access_token)}`)
    // Normally up to 36 hours later, announced to the partner by the "Account activated" webhook.
    await cobro.activate(connection.user_id)
    say("operator")(`verified ${connection.user_id}: ACTIVE`)
    const account = await site.readAccount(connection.user_id)
    say("partner")(`account ${account.user_id} is ${account.account_status}`)
    await site.createPayment(connection.user_id, {
      external_id: `order-${++orders}`,
      amount: 1500,
      motive: "Primer pedido"
    })
  }
})

console.log()
console.log(`Open ${site.url}/ and choose "Conectar mi cuenta de cobro".`)
console.log(`Or from a terminal: curl -si ${site.url}/connect   (the Location is cobro's /authorize page)`)

const shutdown = () => {
  Promise.all([site.close(), cobro.close()]).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error)
      process.exit(1)
    }
  )
}
process.once("SIGINT", shutdown)
process.once("SIGTERM", shutdown)
