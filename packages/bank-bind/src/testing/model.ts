/** What the BIND simulator (`BindSimulator.ts`) holds and offers to a test. */
import type * as Api from "../internal/api.js"
import type { Faults } from "./faults.js"
import type { IncomingEntry, Notice, WebhookTarget } from "./notices.js"

export interface Holder {
  readonly cuit: string
  readonly name: string
  /** The CBU/CVU; the holder is found by it or by `alias`. */
  readonly cbu: string
  readonly alias?: string
}

export interface CvuEntry {
  readonly id: number
  readonly cvu: string
  alias: string
  open: boolean
}

export interface TransferEntry {
  readonly id: string
  readonly origin_id: string
  readonly to: { readonly cbu?: string; readonly alias?: string }
  readonly amount: number
  status: Api.TransferStatusCode
}

export interface Simulator {
  /** The API's base URL (`COBRO_BIND_BASE_URL`). */
  readonly url: string
  /** The token endpoint (`COBRO_BIND_TOKEN_URL`). */
  readonly tokenUrl: string
  readonly clientId: string
  readonly clientSecret: string
  readonly faults: Faults
  readonly stats: { logins: number; unauthorized: number; transferRequests: number }
  readonly cvus: ReadonlyMap<string, CvuEntry>
  /** Transfers by `origin_id`. */
  readonly transfers: ReadonlyMap<string, TransferEntry>
  readonly addHolder: (holder: Holder) => void
  /** Every token issued so far is refused from now on (401). */
  readonly revokeTokens: () => void
  /** Finishes a transfer that `holdTransfers` kept pending. */
  readonly settle: (originId: string, status: "COMPLETED" | "FAILED") => void
  /** Transfers in, as booked (the statement). */
  readonly incoming: ReadonlyArray<IncomingEntry>
  /** Sets where `receive` notifies. */
  readonly setWebhook: (target: WebhookTarget) => void
  /**
   * Money reaches `notice.cvu`: booked in the statement, then notified to the webhook (as the
   * faults say; retried up to 5 times until it answers 200). Resolves to the transfer's id and
   * the last status the receiver answered ("dropped": never sent; "none": no webhook set).
   */
  readonly receive: (
    notice: Notice
  ) => Promise<{ readonly id: string; readonly status: number | "dropped" | "none" }>
  /** POSTs "Aviso de transferencia entrante" to `url` (booking the transfer); the receiver's status. */
  readonly sendIncomingTransfer: (
    url: string,
    notice: Notice,
    auth?: { readonly header: string; readonly secret: string }
  ) => Promise<number>
  readonly close: () => Promise<void>
}

export interface Options {
  readonly clientId?: string
  readonly clientSecret?: string
  /** The port to listen on (0, the default: a free one) and the host (default 127.0.0.1). */
  readonly port?: number
  readonly host?: string
  readonly webhook?: WebhookTarget
  /**
   * The entity whose collecting account the CVUs belong to: who a lookup of one of them answers
   * (default "Cobro Simulado SA", CUIT 30-71659554-0).
   */
  readonly entity?: { readonly cuit: string; readonly name: string }
  /** The simulator's clock (token expiry, notification dates), epoch millis. */
  readonly now: () => number
}
