/**
 * How long a dashboard session lives (`COBRO_DASHBOARD_IDLE_TIMEOUT`,
 * `COBRO_DASHBOARD_SESSION_LIFETIME`), on real time.
 */
import { Config, Duration } from "effect"
import { atLeastOneSecond } from "./configReaders.js"
import { variables } from "./configVariables.js"

export interface DashboardSessions {
  /** A session ends after this long without a request. */
  readonly idleTimeout: Duration.Duration
  /** A session ends this long after sign-in, used or not. */
  readonly sessionLifetime: Duration.Duration
}

export const dashboardSessions: Config.Config<DashboardSessions> = Config.all({
  idleTimeout: atLeastOneSecond(variables.dashboardIdleTimeout, '"30 minutes"', Duration.minutes(30)),
  sessionLifetime: atLeastOneSecond(variables.dashboardSessionLifetime, '"12 hours"', Duration.hours(12))
})
