import { Cobro, CobroError } from "@cobro/client"

// 1. the demo merchant's credentials, as the start banner printed them (the client exchanges
//    them for tokens when needed)
const cobro = new Cobro({
  baseUrl: process.env.COBRO_URL ?? "http://localhost:3000",
  credentials: {
    userId: "demo",
    clientId: process.env.COBRO_CLIENT_ID!,
    clientSecret: process.env.COBRO_CLIENT_SECRET!
  }
})

// 2. a payment: it gets its own CVU and alias (a new order id on every run)
const created = await cobro.createPayment({
  user_id: "demo",
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"],
  external_id: `order-${Date.now()}`,
  webhook_url: "https://example.com/hooks"
})
const { id, quotes } = created.data

// 3. the payer transfers (sandbox faucet)
const sent = await cobro.faucet(quotes[0].cvu, { amount: 1500 })
console.log(sent.data.outcome) // → "credited"

// 4. the payment is paid
const payment = await cobro.getPayment(id)
console.log(payment.data.payment_status) // → "SUCCESS"

// an error answer throws, with the envelope's key and data
try {
  await cobro.getPayment("VAR-demo-no-such-order")
} catch (error) {
  if (!(error instanceof CobroError)) throw error
  console.log(error.status, error.message) // → 404 "payment.not.found"
}
