/* global console, process, URL */
/**
 * A new HTTPS connection from node's client, as the webhook transport opens one to a receiver it
 * has no idle connection to: with a TLS context built for each connection (what `tls.connect`
 * does when it is given none) and with one context shared by every connection (what the
 * transport's agent now passes). Client CPU time per request, each request on a new connection
 * (handshake, certificate verified, POST, 200), in one run, and their ratio. The receiver runs in
 * a child process, so its CPU is not counted. Not part of the tests.
 *
 *   node bench/tls.mjs
 */
import { fork } from "node:child_process"
import * as fs from "node:fs"
import * as https from "node:https"
import * as tls from "node:tls"

const N = Number(process.env.BENCH_N ?? 2_000)
const fixture = (name) =>
  fs.readFileSync(new URL(`../packages/webhooks/test/fixtures/${name}`, import.meta.url))
const cert = fixture("self-signed.cert.pem")

if (process.argv[2] === "receiver") {
  const server = https.createServer({ key: fixture("self-signed.key.pem"), cert }, (req, res) => {
    req.resume()
    req.on("end", () => res.writeHead(200, { connection: "close" }).end())
  })
  server.listen(0, "127.0.0.1", () => process.send(server.address().port))
} else {
  const receiver = fork(new URL(import.meta.url).pathname, ["receiver"])
  const port = await new Promise((resolve) => receiver.once("message", resolve))
  // The test certificate is trusted the same way on both sides: the comparison is the context's
  // construction, not what it trusts.
  const perConnection = new https.Agent({ keepAlive: false, ca: cert })
  const shared = new https.Agent({ keepAlive: false, secureContext: tls.createSecureContext({ ca: cert }) })
  const post = (agent) =>
    new Promise((resolve, reject) => {
      const request = https.request(`https://localhost:${port}/hooks`, { method: "POST", agent }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`))
        res.resume()
        res.on("end", resolve)
      })
      request.on("error", reject)
      request.end('{"message":"x"}')
    })
  const cpu = async (agent) => {
    for (let i = 0; i < 200; i++) await post(agent)
    const start = process.cpuUsage()
    for (let i = 0; i < N; i++) await post(agent)
    const used = process.cpuUsage(start)
    return (used.user + used.system) / N
  }
  const rounds = []
  for (let round = 0; round < 3; round++) rounds.push([await cpu(perConnection), await cpu(shared)])
  receiver.kill()
  for (const [each, one] of rounds) {
    console.log(
      `context per connection: ${each.toFixed(0)} µs CPU a request; shared: ${one.toFixed(0)} µs; shared ÷ per connection: ${(one / each).toFixed(2)}`
    )
  }
}
