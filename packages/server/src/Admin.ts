/**
 * What an operator does to a cobro database, over the engine's services: create merchants and
 * partners, set an account's status, verify the ledger, inspect and replay webhook deliveries,
 * read the sandbox's 2FA codes, list outgoing transfers in flight. The CLI prints these; the
 * server uses `ensureDemo` at start.
 */
export { type ListInput } from "./internal/admin/input.js"
export * from "./internal/admin/merchants.js"
export * from "./internal/admin/operations.js"
export * from "./internal/admin/money.js"
export * from "./internal/admin/sandbox.js"
export * from "./internal/admin/transfers.js"
export * from "./internal/admin/sandboxDrive.js"
