/**
 * BIND PSP's wire: paths and bodies, shared by the adapter and the simulator. What BIND's pages
 * document is marked "documented"; everything else is an assumption listed in docs/decisions.md
 * ("BIND PSP adapter"), so a correction is made here once.
 */
import { Schema } from "effect"

/** Banco Industrial's bank code, fixed in every documented path. */
export const BANK_ID = "322"

const owner = `/cvucollectentidad-financial/v1/v1.201/banks/${BANK_ID}/accounts/owner`

export const paths = {
  /** Documented (Realizar Transferencia). */
  transfers: `${owner}/transaction-request-types/TRANSFER/transaction-requests`,
  /** Documented (Asignar alias): `{id}` is the CVU's numeric id. */
  assignAlias: (id: number) => `/walletentidad-cuenta/v1/api/v1.201/AsignarAlias/CVU/${id}`,
  /** Assumed: open (POST), read and close (GET/DELETE `/{cvu}`) a CVU of the collecting account. */
  cvus: `${owner}/wallet/cvu`,
  cvu: (cvu: string) => `${owner}/wallet/cvu/${encodeURIComponent(cvu)}`,
  /**
   * Assumed: the collecting account's statement (Open Bank Project style, like the documented
   * paths), paged with `obp_from_date`, `obp_to_date` (ISO 8601, UTC), `obp_limit`, `obp_offset`.
   */
  movements: `${owner}/transactions`,
  /** Assumed: who holds a CBU, CVU or alias. */
  counterparty: (address: string) => `${owner}/counterparties/${encodeURIComponent(address)}`
} as const

/** Assumed: the OAuth 2 client-credentials answer of the token endpoint. */
export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  expires_in: Schema.Number
})

/** Assumed: a CVU of the collecting account. */
export const CvuRecord = Schema.Struct({
  id: Schema.Number,
  cvu: Schema.String,
  alias: Schema.String
})
export type CvuRecord = typeof CvuRecord.Type

/** Documented in the webhook: an account as BIND routes it. */
export const AccountRouting = Schema.Struct({
  scheme: Schema.Literal("CBU", "LABEL", "UNAVAILABLE"),
  address: Schema.optionalWith(Schema.String, { default: () => "" })
})

/** Documented in the webhook (`data.counterparty`); assumed as the holder lookup's answer too. */
export const Counterparty = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  id_type: Schema.optional(Schema.String),
  account_routing: AccountRouting
})
export type Counterparty = typeof Counterparty.Type

/** Documented: `value.currency` is "ARS"; `value.amount` a decimal number. */
export const Value = Schema.Struct({
  currency: Schema.Literal("ARS"),
  amount: Schema.Number
})

/** Documented request of Realizar Transferencia. */
export interface TransferRequest {
  readonly origin_id: string
  readonly to: { readonly cbu: string } | { readonly alias: string }
  readonly value: typeof Value.Type
  readonly description?: string
  readonly concepto: "VAR"
}

/** Assumed statuses of a transfer request (Open Bank Project style, like BIND's paths). */
export const confirmedStatuses = ["COMPLETED"] as const
export const pendingStatuses = ["PENDING", "IN_PROGRESS", "INITIATED"] as const
export const failedStatuses = ["FAILED", "REJECTED", "CANCELLED"] as const
export const TransferStatusCode = Schema.Literal(...confirmedStatuses, ...pendingStatuses, ...failedStatuses)
export type TransferStatusCode = typeof TransferStatusCode.Type

/** Assumed answer of Realizar Transferencia and of the status query. */
export const TransferResponse = Schema.Struct({
  id: Schema.String,
  status: TransferStatusCode,
  details: Schema.Struct({
    origin_id: Schema.String,
    to: Schema.Struct({ cbu: Schema.optional(Schema.String), alias: Schema.optional(Schema.String) }),
    value: Value
  })
})
export type TransferResponse = typeof TransferResponse.Type

/** The webhook "Aviso de transferencia entrante": documented fields, plus `value` and `to` (assumed). */
export const IncomingTransferNotice = Schema.Struct({
  id: Schema.String,
  object: Schema.optional(Schema.String),
  created: Schema.String,
  data: Schema.Struct({
    id: Schema.String,
    type: Schema.Literal("TRANSFER"),
    from: Schema.Struct({ bank_id: Schema.String, account_id: Schema.String }),
    counterparty: Counterparty,
    value: Value,
    to: Schema.Struct({ cvu: Schema.String })
  })
})
export type IncomingTransferNotice = typeof IncomingTransferNotice.Type

/** The page size the adapter asks the statement for. */
export const MOVEMENTS_PAGE = 100

/** What a transfer in is, in the webhook's `data` and in the statement. */
export const IncomingTransferData = IncomingTransferNotice.fields.data
export type IncomingTransferData = typeof IncomingTransferData.Type

/**
 * Assumed: a movement of the statement. Transfers in carry the webhook's `data` fields, with
 * `direction` "CREDIT" and the booking time `created`; other movements are skipped unread.
 */
export const Movement = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  direction: Schema.Literal("CREDIT", "DEBIT"),
  created: Schema.String
})

/** Assumed answer of the statement: one page of movements, oldest first. */
export const MovementsPage = Schema.Struct({
  transactions: Schema.Array(Schema.Unknown)
})
