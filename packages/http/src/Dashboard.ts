/**
 * The merchants' and partners' dashboard at `/dashboard`, a set of hosted pages
 * (`internal/dashboard/`): server-rendered HTML in Spanish (es-AR), usable without JavaScript,
 * behind a web session (`WebSessions`: sign-in with e-mail or client id and password, and in
 * production a second proof), CSRF on every form, the hosted pages' security headers.
 *
 * Served by `CobroHttp.layer` when `settings.dashboard` is set; the engine must have
 * `WebSessions.WebSessions` (the reference server provides it).
 */
export { layer } from "./internal/dashboard/routes.js"
export { PATH, SESSION_COOKIE } from "./internal/dashboard/kit.js"
export type { DashboardKit, MerchantSession, Session } from "./internal/dashboard/kit.js"
