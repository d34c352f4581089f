/* global console, crypto, process, TextEncoder */
/**
 * The SHA-256 of a bearer token (every authenticated request computes one) through WebCrypto,
 * core's portable `Crypto` adapter, and through `node:crypto`, the server's `NodeCrypto`: CPU time
 * per digest of each, in one run, and their ratio. Not part of the tests.
 *
 *   node bench/crypto.mjs
 */
import { createHash } from "node:crypto"

const encoder = new TextEncoder()
const token = `USR-${"a1b2c3d4".repeat(5)}`
const N = 20_000

const cpu = async (f) => {
  for (let i = 0; i < 2_000; i++) await f()
  const start = process.cpuUsage()
  for (let i = 0; i < N; i++) await f()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / N
}

const web = await cpu(() => crypto.subtle.digest("SHA-256", encoder.encode(token)))
const node = await cpu(() => createHash("sha256").update(token).digest())
console.log(`WebCrypto subtle.digest: ${web.toFixed(1)} µs CPU`)
console.log(`node:crypto createHash:  ${node.toFixed(1)} µs CPU`)
console.log(`node ÷ WebCrypto:        ${(node / web).toFixed(2)}`)
