/** What the BIND simulator (`BindSimulator.ts`) holds and offers to a test. */
import type * as Api from "../internal/api.js"
import type { Faults } from "./faults.js"
import type { IncomingEntry, Notice, WebhookTarget } from "./notices.js"

/** An account outside the entity (another bank's CBU, a wallet's CVU), for lookups. */
export interface Holder {
  readonly cuit: string
  readonly name: string
  /** The CBU/CVU; the holder is found by it or by `alias`. */
  readonly cbu: string
  readonly alias?: string
}

/** A CVU of the entity (Crear CVU). */
export interface CvuEntry {
  readonly client_id: string
  readonly cvu: string
  /** The holder name the payer's bank shows (Crear CVU's `name`). */
  readonly name: string
  /** None until "Asignar alias" (BIND creates CVUs without one). */
  alias: string | null
  /** When the alias was last assigned (epoch millis): BIND allows one change every 24 hours. */
  aliasAssignedAt: number | null
  open: boolean
}

/** An outgoing transfer (Realizar Transferencia). */
export interface TransferEntry {
  readonly id: string
  readonly origin_id: string
  readonly to: { readonly cbu?: string; readonly alias?: string }
  readonly amount: number
  readonly description: string
  readonly concept: string
  readonly started: number
  status: Api.TransferStatusCode
  ended: number | null
}

export interface Simulator {
  /** The API's base URL (`COBRO_BIND_BASE_URL`). */
  readonly url: string
  /** The token endpoint (`COBRO_BIND_TOKEN_URL`). */
  readonly tokenUrl: string
  readonly clientId: string
  readonly clientSecret: string
  /** The scope the token endpoint grants (staging's, by default). */
  readonly scope: string
  /** The entity: the CUIT every CVU is created in (`COBRO_BIND_CUIT`), and its name. */
  readonly entity: { readonly cuit: string; readonly name: string }
  readonly faults: Faults
  readonly stats: { logins: number; unauthorized: number; transferRequests: number; conciliations: number }
  /** CVUs by number. */
  readonly cvus: ReadonlyMap<string, CvuEntry>
  /** Transfers out by `origin_id`. */
  readonly transfers: ReadonlyMap<string, TransferEntry>
  readonly addHolder: (holder: Holder) => void
  /** Every token issued so far is refused from now on (401). */
  readonly revokeTokens: () => void
  /** Moves a transfer out to `status` (any documented one); a final one is notified. */
  readonly settle: (originId: string, status: Api.TransferStatusCode) => void
  /** Moves the simulator's clock forward (the 24-hour alias rule, dates). */
  readonly passTime: (millis: number) => void
  /** Transfers in, as booked (the statement). */
  readonly incoming: ReadonlyArray<IncomingEntry>
  /** Books an entry of the statement exactly as given (one BIND describes oddly), never notified. */
  readonly bookRaw: (entry: Record<string, unknown>) => void
  /** Sets where events are posted. */
  readonly setWebhook: (target: WebhookTarget) => void
  /**
   * Money reaches `notice.cvu`: booked in the statement, then notified to the webhook (as the
   * faults say; redelivered up to 5 times until it answers 200). Resolves to the transfer's id and
   * the last status the receiver answered ("dropped": never sent; "none": no webhook set).
   */
  readonly receive: (
    notice: Notice
  ) => Promise<{ readonly id: string; readonly status: number | "dropped" | "none" }>
  /** POSTs "Aviso de transferencia entrante" to `url` once (booking the transfer); the receiver's status. */
  readonly sendIncomingTransfer: (
    url: string,
    notice: Notice,
    auth?: { readonly header: string; readonly secret: string },
    redeliveries?: number
  ) => Promise<number>
  readonly close: () => Promise<void>
}

export interface Options {
  readonly clientId?: string
  readonly clientSecret?: string
  readonly scope?: string
  /** The port to listen on (0, the default: a free one) and the host (default 127.0.0.1). */
  readonly port?: number
  readonly host?: string
  readonly webhook?: WebhookTarget
  /** The entity (default "Cobro Simulado SA", CUIT 30-71659554-0). */
  readonly entity?: { readonly cuit: string; readonly name: string }
  /** The simulator's clock (token expiry, dates), epoch millis. */
  readonly now: () => number
}
