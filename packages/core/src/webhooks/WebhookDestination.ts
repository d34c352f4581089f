/**
 * Which webhook URLs may receive events, judged from the URL alone: the policy the engine applies
 * when a URL is registered (payments, fixed customers, split payments, partners) and the one the
 * transport applies again before each attempt. The two share this code so that a URL accepted
 * at creation is one the transport will try, and a URL the transport refuses for what it is was
 * already refused at creation.
 *
 * - Every mode: an absolute `http:` or `https:` URL without credentials (the transport never
 *   sends credentials).
 * - Production: `https:` only; the host is neither `localhost` (nor a name under it, RFC 6761)
 *   nor an IP literal that `IpAddress` does not classify `public` (loopback, private,
 *   link-local, CGNAT, multicast, reserved…), in any notation the URL parser accepts
 *   (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`, `[::ffff:127.0.0.1]`): WHATWG `URL`
 *   normalizes the host of http(s) URLs to canonical dotted decimal or compressed IPv6 before it
 *   is classified.
 * - Sandbox: any host, so receivers on the developer's machine work.
 *
 * A name is not resolved here (core has no DNS, and the answer can change): the transport checks
 * the addresses a name resolves to at every connection.
 */
import { Effect, Option } from "effect"
import { EngineConfig, type WebhookDestinationMode } from "../EngineConfig.js"
import { InvalidInput } from "../Errors.js"
import * as IpAddress from "./IpAddress.js"

/** sandbox: any http(s) URL; production: https to public destinations only. */
export type Mode = WebhookDestinationMode

/**
 * Why a URL can never receive webhooks: `invalid`, it is not a usable URL (not absolute, not
 * http(s), credentials); `forbidden`, the mode does not contact what it names (a scheme, a local
 * name, a non-public address).
 */
export interface Refusal {
  readonly kind: "invalid" | "forbidden"
  readonly detail: string
}

const invalid = (detail: string): Option.Option<Refusal> => Option.some({ kind: "invalid", detail })
const forbidden = (detail: string): Option.Option<Refusal> => Option.some({ kind: "forbidden", detail })

/** The host of a parsed URL without IPv6 brackets or the trailing dot of a fully qualified name. */
export const hostOf = (url: URL): string => {
  const host = url.hostname
  if (host.startsWith("[") && host.endsWith("]")) return host.slice(1, -1)
  return host.endsWith(".") ? host.slice(0, -1) : host
}

/** `localhost` and the names under it, which resolve to loopback by definition (RFC 6761). */
const isLocalhost = (host: string): boolean => {
  const name = host.toLowerCase()
  return name === "localhost" || name.endsWith(".localhost")
}

/** Why `url` can never receive webhooks in `mode`, whatever DNS answers; none when it may. */
export const refusal = (mode: Mode, url: string): Option.Option<Refusal> => {
  if (!URL.canParse(url)) return invalid("not an absolute URL")
  const parsed = new URL(url)
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return invalid(`scheme ${parsed.protocol} is not http(s)`)
  }
  if (parsed.username !== "" || parsed.password !== "")
    return invalid("credentials in the URL are not allowed")
  if (mode === "sandbox") return Option.none()
  if (parsed.protocol !== "https:") return forbidden("production webhooks must use https")
  const host = hostOf(parsed)
  if (isLocalhost(host)) return forbidden(`${host} is a loopback name`)
  const cls = IpAddress.classify(host)
  if (Option.isSome(cls) && cls.value !== "public") {
    return forbidden(`${host} is ${IpAddress.describe(cls.value)}`)
  }
  return Option.none()
}

/**
 * Fails with `400 request.invalid` naming `field` when `url` may not receive webhooks in `mode`;
 * absent and null pass.
 */
export const check = (
  mode: Mode,
  field: string,
  url: string | null | undefined
): Effect.Effect<void, InvalidInput> => {
  if (url === null || url === undefined) return Effect.void
  const refused = refusal(mode, url)
  if (Option.isNone(refused)) return Effect.void
  const { kind, detail } = refused.value
  return Effect.fail(
    InvalidInput.of(
      field,
      kind === "invalid"
        ? `is not a usable webhook URL: ${detail}`
        : `is not accepted in ${mode} mode: ${detail}; give an https URL of a public host`
    )
  )
}

/** `check` in the engine's mode (`EngineSettings.webhookDestinations`), for services to hold. */
export const checker: Effect.Effect<
  (field: string, url: string | null | undefined) => Effect.Effect<void, InvalidInput>,
  never,
  EngineConfig
> = Effect.map(EngineConfig, (config) => (field, url) => check(config.webhookDestinations, field, url))
