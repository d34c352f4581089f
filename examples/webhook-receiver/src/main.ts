/**
 * Runs the example receiver:
 *
 *   COBRO_WEBHOOK_SECRET=cs_… COBRO_API_URL=http://localhost:3000 COBRO_API_TOKEN=USR-… \
 *     PORT=4000 npm start -w examples/webhook-receiver
 *
 * and give `http://localhost:4000/` as the payment's `webhook_url` (the sandbox server delivers to
 * loopback addresses; a production one does not).
 */
import { createReceiver } from "./receiver.js"

const required = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") {
    console.error(`set ${name}`)
    process.exit(1)
  }
  return value
}

const port = Number(process.env["PORT"] ?? 4000)
const server = createReceiver({
  secret: required("COBRO_WEBHOOK_SECRET"),
  apiBaseUrl: required("COBRO_API_URL").replace(/\/+$/, ""),
  apiToken: required("COBRO_API_TOKEN"),
  onConfirmed: (c) => console.log(`payment ${c.paymentId} is ${c.payment_status} (event ${c.eventId})`),
  onError: (eventId, error) => console.error(`event ${eventId} not processed:`, error)
})
server.listen(port, () => console.log(`webhook receiver on http://localhost:${port}/`))
