/** The simulator's fault switches: what goes wrong with BIND, set by a test at any time. */
export interface Faults {
  /** The next N transfer requests are applied, then never answered (the client times out). */
  dropTransferAnswers: number
  /** The next N authenticated calls answer 500 without acting. */
  serverErrors: number
  /** The next N authenticated calls answer 200 with a body that is not JSON, without acting. */
  malformedAnswers: number
  /** Lifetime of the tokens issued from now on. */
  tokenLifetimeSeconds: number
  /** New transfers stay `IN_PROGRESS` until `settle`. */
  holdTransfers: boolean
  /** CVUs whose alias BIND refuses to change. */
  readonly refuseAliasChange: Set<string>
  /** Aliases whose format BIND refuses (its rules may be stricter than cobro's). */
  readonly refuseAliasFormat: Set<string>
  /** Every authenticated answer waits this long first. */
  slowAnswersMillis: number
  /** The next N transfers in are booked, and their notification is never sent. */
  dropNotifications: number
  /** The next N notifications are sent twice. */
  duplicateNotifications: number
  /** Notifications are sent this long after the transfer is booked. */
  notificationDelayMillis: number
  /** Final statuses of transfers out are posted to the webhook (BIND's outgoing event); off by default. */
  notifyOutgoing: boolean
}

/** No fault. */
export const makeFaults = (): Faults => ({
  dropTransferAnswers: 0,
  serverErrors: 0,
  malformedAnswers: 0,
  tokenLifetimeSeconds: 3900,
  holdTransfers: false,
  refuseAliasChange: new Set(),
  refuseAliasFormat: new Set(),
  slowAnswersMillis: 0,
  dropNotifications: 0,
  duplicateNotifications: 0,
  notificationDelayMillis: 0,
  notifyOutgoing: false
})
