/** The lines the server prints once it listens: its version, mode, storage, bank, addresses and demo merchant. */
import type * as HttpServer from "@effect/platform/HttpServer"
import { Option } from "effect"
import * as Admin from "./Admin.js"
import * as RateLimits from "./RateLimits.js"
import { describeDatabase, metricsExposure, type ServerConfig, variables } from "./ServerConfig.js"
import * as Tracing from "./Tracing.js"

export const version = "0.1.0"

/** What the start banner says of the bank. */
export const bankLine = (config: ServerConfig): string =>
  config.bank === "bind"
    ? `  Bank:       BIND PSP (COBRO_BANK=bind); notifications in at ${config.publicUrl}/bank/bind/notifications`
    : config.mode === "sandbox"
      ? "  Bank:       sandbox bank (simulated; no money moves; send test transfers with the faucet)"
      : "  Bank:       sandbox bank (no money moves)"

/** `http://localhost:PORT` for a server listening on every interface. */
export const localUrl = (address: HttpServer.Address): string =>
  address._tag === "UnixAddress"
    ? `unix:${address.path}`
    : `http://${["0.0.0.0", "::", "127.0.0.1", "::1"].includes(address.hostname) ? "localhost" : address.hostname}:${address.port}`

/** What the start banner says of `/metrics`; `listener`: where its own listener listens, if it has one. */
export const metricsLine = (
  config: ServerConfig,
  url: string,
  listener: Option.Option<HttpServer.Address>
): string => {
  const exposure = metricsExposure(config)
  switch (exposure._tag) {
    case "Open":
      return `  Metrics:    ${url}/metrics, open (set ${variables.metricsToken} or ${variables.metricsAddress} to protect it)`
    case "Token":
      return `  Metrics:    ${url}/metrics with Authorization: Bearer <${variables.metricsToken}>`
    case "Address": {
      const at = Option.match(listener, {
        onNone: () => `http://${exposure.address.host}:${exposure.address.port}`,
        onSome: localUrl
      })
      return `  Metrics:    ${at}/metrics (${variables.metricsAddress}${exposure.token ? `, with Authorization: Bearer <${variables.metricsToken}>` : ""}), not on the API's port`
    }
    case "Off":
      return `  Metrics:    not served (production serves /metrics with ${variables.metricsToken} or on ${variables.metricsAddress})`
  }
}

/** The lines printed once the server listens; `metrics`: where the metrics' own listener listens. */
export const banner = (
  config: ServerConfig,
  address: HttpServer.Address,
  demo: Admin.DemoMerchant | undefined,
  metrics: Option.Option<HttpServer.Address> = Option.none()
): ReadonlyArray<string> => {
  const url = localUrl(address)
  const lines = [
    `cobro ${version} (${config.mode} mode)`,
    `  Database:   ${describeDatabase(config.database)}`,
    bankLine(config),
    `  Limits:     ${RateLimits.describe(config)}`,
    `  Listening on ${url}`,
    `  Docs:       ${url}/docs  (OpenAPI: ${url}/openapi.json)`
  ]
  lines.push(`  Payments:   payment_url is ${config.publicUrl}/pay/{id} (COBRO_PUBLIC_URL)`)
  if (config.mode === "sandbox") {
    lines.push(
      "  Sandbox:    POST /cvu/{cvu}/faucet; your own test clock: GET /sandbox/clock, POST /sandbox/clock/advance {seconds | to} (bearer token)"
    )
  }
  lines.push(
    config.sandboxKey
      ? "  Secrets:    sealed under the public sandbox key (set COBRO_SECRET_KEY to use your own)"
      : "  Secrets:    sealed under COBRO_SECRET_KEY"
  )
  lines.push(metricsLine(config, url, metrics))
  if (Option.isSome(config.tracing)) {
    const { url, protocol } = config.tracing.value
    lines.push(`  Traces:     exported to ${Tracing.describeUrl(url)} (OTLP ${protocol})`)
  }
  if (demo !== undefined) {
    switch (demo._tag) {
      case "Created":
        lines.push(
          "  Demo merchant (created now; the secret is shown only this once):",
          `    user_id:       ${demo.user_id}`,
          `    client_id:     ${demo.client_id}`,
          `    client_secret: ${demo.client_secret}`,
          `    token:         curl -s -X POST ${url}/users/${demo.user_id}/tokens -H 'content-type: application/json' \\`,
          `                     -d '{"client_id":"${demo.client_id}","client_secret":"${demo.client_secret}"}'`
        )
        break
      case "Existing":
        lines.push(
          `  Demo merchant: ${demo.user_id} (exists; client_id ${demo.client_id ?? "unknown"}; its secret was shown when it was created)`,
          "    new credentials: npx cobro users create --name … --email … --cuit … --status ACTIVE --json"
        )
        break
      case "Failed":
        lines.push(`  Demo merchant: not created (${demo.reason})`)
    }
    lines.push(
      `  Sandbox bank account for payouts: CBU ${Admin.demo.payoutAccount.account} (alias ${Admin.demo.payoutAccount.alias}), holder CUIT ${Admin.demo.cuit}`
    )
    if (config.bank === "sandbox") {
      lines.push(
        "    more accounts to pay out to: POST /sandbox/bank-accounts (or cobro sandbox bank-account --user-id U)"
      )
    }
  }
  return lines
}
