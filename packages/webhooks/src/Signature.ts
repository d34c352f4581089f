/**
 * How a delivery is signed. Two signatures over one key, the UTF-8 bytes of the signing client
 * secret:
 *
 * - `X-Service-Signature: sha256=<hex HMAC-SHA256(key, raw body)>`, the header SPEC announces;
 * - Standard Webhooks (https://www.standardwebhooks.com): `webhook-id` (the event id, the same on
 *   every retry), `webhook-timestamp` (seconds since the epoch, of this attempt) and
 *   `webhook-signature: v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`.
 *
 * Standard Webhooks libraries take the key as base64 after a `whsec_` prefix:
 * `standardWebhooksSecret(clientSecret)` gives that form.
 */
import { createHmac } from "node:crypto"

export const headerNames = {
  service: "x-service-signature",
  id: "webhook-id",
  timestamp: "webhook-timestamp",
  signature: "webhook-signature"
} as const

type Bytes = string | Uint8Array

const hmac = (secret: string, parts: ReadonlyArray<Bytes>) => {
  const mac = createHmac("sha256", Buffer.from(secret, "utf8"))
  for (const part of parts) mac.update(part)
  return mac.digest()
}

/** `sha256=<hex>` of the body: the `X-Service-Signature` value. */
export const serviceSignature = (secret: string, body: Bytes): string =>
  `sha256=${hmac(secret, [body]).toString("hex")}`

/** The base64 HMAC of `{id}.{timestamp}.{body}`, without the `v1,` prefix. */
export const standardSignatureBase64 = (secret: string, id: string, timestamp: number, body: Bytes): string =>
  hmac(secret, [`${id}.${timestamp}.`, body]).toString("base64")

/** `v1,<base64>`: the `webhook-signature` value. */
export const standardSignature = (secret: string, id: string, timestamp: number, body: Bytes): string =>
  `v1,${standardSignatureBase64(secret, id, timestamp, body)}`

/** Every signature header of one attempt. `timestamp` is in seconds. */
export const headers = (input: {
  readonly secret: string
  readonly eventId: string
  readonly timestamp: number
  readonly body: string
}): Record<string, string> => ({
  [headerNames.id]: input.eventId,
  [headerNames.timestamp]: String(input.timestamp),
  [headerNames.signature]: standardSignature(input.secret, input.eventId, input.timestamp, input.body),
  [headerNames.service]: serviceSignature(input.secret, input.body)
})

/**
 * The secret in the form Standard Webhooks libraries expect (`whsec_` + base64 of the key bytes),
 * e.g. `new Webhook(standardWebhooksSecret(clientSecret))` with the `standardwebhooks` package.
 */
export const standardWebhooksSecret = (clientSecret: string): string =>
  `whsec_${Buffer.from(clientSecret, "utf8").toString("base64")}`
