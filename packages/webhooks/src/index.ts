/** The SSRF guard's address classification; it lives in core, which also checks URLs at registration. */
export { IpAddress } from "@cobro/core"
export * as NodeTransport from "./NodeTransport.js"
export * as Receiver from "./Receiver.js"
export * as Signature from "./Signature.js"
export * as Webhooks from "./Webhooks.js"
export * as WebhooksConfig from "./WebhooksConfig.js"
export * as WebhookTransport from "./WebhookTransport.js"
