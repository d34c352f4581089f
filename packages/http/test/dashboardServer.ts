/**
 * The test server with the dashboard at `/dashboard` (sandbox engine in memory, sessions without
 * a second proof and without `Secure`, rate limits off so that a test's many requests from one
 * address are not refused).
 */
import { defaultDashboard } from "../src/HttpConfig.js"
import { type ServerLayer, serverLayer } from "./support.js"

export const dashboardServerLayer = (): ServerLayer =>
  serverLayer({
    rateLimits: false,
    dashboard: { ...defaultDashboard, secondFactor: false, secureCookie: false, sandbox: true }
  })
