/**
 * `@cobro/http/node`: what needs `@effect/platform-node` (an optional peer dependency of
 * `@cobro/http`), apart from the main entry so that a host without node:http never loads it.
 */
export * as NodeHttp from "./NodeHttp.js"
