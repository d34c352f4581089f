/**
 * BIND PSP's wire, as BIND's developer portal documents its collection product ("Agente de
 * cobros": CVUs of the entity, transfers in and out of its collecting account), shared by the
 * adapter and the simulator. Each path and shape names its page; what no page says is marked
 * "assumed" and listed in docs/decisions/0062-bind-as-documented.md.
 *
 * Decoding is liberal where money does not depend on a field (unknown fields, nulls, numbers for
 * strings, any routing scheme) and the adapter is strict, field by field, where it does
 * (`BindWebhook.mapIncoming`).
 */
import { Schema } from "effect"

/** Banco Industrial's bank code, fixed in every documented path. */
export const BANK_ID = "322"

const base = "/cvucollectentidad-financial/v1/v1.201"
const view = `${base}/banks/${BANK_ID}/view/owner/wallet`
const owner = `${base}/banks/${BANK_ID}/accounts/owner`

export const paths = {
  /** Crear CVU (POST). */
  createCvu: `${view}/cvu`,
  /** Eliminar CVU (DELETE `/{cvu}/{cuit}`). */
  deleteCvu: (cvu: string, cuit: string) =>
    `${view}/cvu/${encodeURIComponent(cvu)}/${encodeURIComponent(cuit)}`,
  /** Asignar alias (POST). */
  alias: `${view}/alias`,
  /** Consultar transferencias (GET, parameters in headers). */
  transfersList: `${base}/banks/${BANK_ID}/accounts/transfers`,
  /** Conciliar transferencia entrante (POST; "concilitations" is BIND's spelling). */
  conciliate: `${owner}/concilitations-by-transfer`,
  /** Realizar Transferencia (POST). */
  transfers: `${owner}/transaction-request-types/TRANSFER/transaction-requests`,
  /** Consultar transferencia (GET) by BIND's id or our `origin_id`. */
  transfer: (id: string) => `${owner}/transaction-request-types/TRANSFER/${encodeURIComponent(id)}`,
  /** Consultar saldo de la cuenta recaudadora (GET). */
  balance: `${base}/Balance`,
  /** Wallet's "Consultar cuenta x CBU/CVU/alias" (GET `?cbuOrCvu=` or `?alias=`). */
  account: "/walletentidad-cuenta/v1/api/v1.201/CuentaCVUByCbuCvuOrAlias"
} as const

/** BIND's environments ("Entornos, Autenticación OAuth2"): base URL, token endpoint, scope. */
export const environments = {
  staging: {
    baseUrl: "https://gw-staging-qrbind.epays.services",
    tokenUrl: "https://login.microsoftonline.com/61ef5b89-8df3-499d-8c13-38fed5d09c72/oauth2/v2.0/token",
    scope: "api://staging-bind.epays.services/.default",
    mtlsBaseUrl: "https://mtls-gw-staging-qrbind.epays.services"
  },
  production: {
    baseUrl: "https://api.bindpagos.com.ar",
    tokenUrl: "https://login.microsoftonline.com/3ee81fb8-f2e8-4475-aef2-c5902f9fb0c3/oauth2/v2.0/token",
    scope: "api://bindpagos.com.ar/.default",
    /** Not documented for production: BIND gives it with the mTLS consumer. */
    mtlsBaseUrl: undefined
  }
} as const
export type Environment = keyof typeof environments

/** The OAuth2 scope of the mTLS lane (documented for staging in "mTLS — APIs y Webhooks"). */
export const MTLS_SCOPE = "api://2356cbac-6958-45a6-b7c4-ff5b888a2fe9/.default"

/** A string BIND may send as a number (CUITs, `client_id`): read as its decimal text. */
const Text = Schema.Union(
  Schema.String,
  Schema.transform(Schema.Number, Schema.String, {
    strict: true,
    decode: (n) => (Number.isSafeInteger(n) ? n.toFixed(0) : String(n)),
    encode: (s) => Number(s)
  })
)
/** Optional, and null taken as absent. */
const loose = <A, I>(schema: Schema.Schema<A, I>) => Schema.optional(Schema.NullOr(schema))

/** The token endpoint's answer (Microsoft Entra ID, OAuth2 client credentials). */
export const TokenResponse = Schema.Struct({
  token_type: Schema.optional(Schema.String),
  access_token: Schema.String,
  expires_in: Schema.Number,
  ext_expires_in: Schema.optional(Schema.Number)
})

/** Crear CVU's request. `client_id` is ours, unique per CVU (the example sends a number). */
export const CreateCvuRequest = Schema.Struct({ client_id: Text, cuit: Text, name: Schema.String })
/** Crear CVU's answer; `label` is empty (the CVU is created without alias). */
export const CreateCvuResponse = Schema.Struct({
  cvu: Text,
  label: loose(Schema.String),
  reactivated: loose(Schema.Boolean)
})

/** Asignar alias's request (label: 6 to 20 characters) and answer. */
export const AliasRequest = Schema.Struct({ cuit: Text, cvu: Text, label: Schema.String })
export const AliasResponse = Schema.Struct({
  cvu: loose(Text),
  label: loose(Schema.String),
  reactivated: loose(Schema.Boolean)
})

/** Conciliar transferencia's request and answer. */
export const ConciliateRequest = Schema.Struct({ transactions_ids: Schema.Array(Schema.String) })
export const ConciliateResponse = Schema.Struct({
  conciliadas: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  conError: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  noConciliadas: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
})

/** Consultar saldo's answer. */
export const BalanceResponse = Schema.Struct({
  moneda: Schema.String,
  saldo: Schema.Number,
  fecha: loose(Schema.String)
})

/** Wallet's "Consultar cuenta x CBU/CVU/alias" answer (the fields the adapter reads). */
export const AccountResponse = Schema.Struct({
  cbucvu: Text,
  alias: loose(Schema.String),
  cuitCuil: Text,
  nombre: loose(Schema.String),
  nombreCvu: loose(Schema.String),
  activo: loose(Schema.Boolean)
})

/** An account as BIND routes it: any scheme (CBU, CVU, LABEL, UNAVAILABLE, "cbu" …), maybe null. */
export const Routing = Schema.Struct({ scheme: loose(Schema.String), address: loose(Text) })

export const Counterparty = Schema.Struct({
  id: loose(Text),
  name: loose(Schema.String),
  id_type: loose(Schema.String),
  bank_routing: loose(Schema.Struct({ scheme: loose(Schema.String), address: loose(Schema.String) })),
  account_routing: loose(Routing)
})

const Party = Schema.Struct({ cvu: loose(Text), cuit: loose(Text) })

/** `charge`: the concept (`summary`, free text in practice: "VAR ", "VAR Devolución …") and value. */
export const Charge = Schema.Struct({
  summary: loose(Schema.String),
  value: Schema.Struct({ currency: Schema.String, amount: Schema.Number })
})

/**
 * A transfer as BIND describes it: the incoming-transfer event's `data`, an entry of "Consultar
 * transferencias", the answer of "Realizar Transferencia" and "Consultar transferencia", and the
 * outgoing event's `data`. Only `id` is required to decode; what money depends on is checked by
 * whoever maps it, naming the field.
 */
export const TransferData = Schema.Struct({
  id: Text,
  type: loose(Schema.String),
  from: loose(Schema.Struct({ bank_id: loose(Text), account_id: loose(Text) })),
  counterparty: loose(Counterparty),
  details: loose(
    Schema.Struct({
      type: loose(Schema.String),
      origin_id: loose(Text),
      origin_debit: loose(Party),
      origin_credit: loose(Party),
      transaction_ids: loose(Schema.Unknown)
    })
  ),
  transaction_ids: loose(Schema.Array(Text)),
  status: loose(Schema.String),
  start_date: loose(Schema.String),
  end_date: loose(Schema.String),
  business_date: loose(Schema.String),
  charge: loose(Schema.Unknown)
})
export type TransferData = typeof TransferData.Type

/** An event BIND posts (incoming CVU/CBU transfer, outgoing transfer): the envelope. */
export const Event = Schema.Struct({
  id: loose(Schema.String),
  object: loose(Schema.String),
  created: loose(Schema.String),
  type: Schema.String,
  redeliveries: loose(Schema.Number),
  data: Schema.Unknown
})
export type Event = typeof Event.Type

/** The event types. */
export const CVU_RECEIVED = "transfer.cvu.received"
export const CBU_RECEIVED = "transfer.cbu.received"
/** The outgoing-transfer event's type is "TRANSFER". */
export const OUTGOING = "TRANSFER"

/** Realizar Transferencia's request. `concepto` per the field table; the example spells it `concept`. */
export interface TransferRequest {
  readonly origin_id: string
  readonly to:
    { readonly cbu: string; readonly alias?: null } | { readonly cbu?: null; readonly alias: string }
  readonly value: { readonly currency: "ARS"; readonly amount: number }
  readonly description?: string
  readonly concepto: Concept
  readonly concept: Concept
}

/** The documented concepts of a transfer. */
export const concepts = ["ALQ", "CUO", "EXP", "FAC", "PRE", "SEG", "HON", "HAB", "VAR"] as const
export type Concept = (typeof concepts)[number]

/** Every documented status of an outgoing transfer. */
export const transferStatuses = [
  "PENDING",
  "IN_PROGRESS",
  "COMPLETED",
  "FAILED",
  "UNKNOWN",
  "UNKNOWN_FOREVER"
] as const
export type TransferStatusCode = (typeof transferStatuses)[number]
export const TransferStatusCode = Schema.Literal(...transferStatuses)

/** The documented maximum length of `origin_id` (longer: 422). */
export const ORIGIN_ID_MAX = 15
/** The documented maximum length of `description`. */
export const DESCRIPTION_MAX = 100

/** "Consultar transferencias" `type` header of transfers in. */
export const RECEIVED = "TRANSFERENCIAS_RECIBIDAS"
/** The page size the adapter asks for (`length` header; BIND's default is 50). */
export const PAGE_LENGTH = 50
/** The statement's date format (the page's example: `2023-12-20 00:00`). */
export const formatListDate = (d: Date): string => d.toISOString().slice(0, 16).replace("T", " ")
