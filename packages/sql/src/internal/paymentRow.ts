/**
 * A payment's row of `cobro_payments`: its indexed columns beside the document (`doc`, in the
 * storage shape of `documents/payment.ts`).
 */
import { Payment as P } from "@cobro/core"
import { TrustedCodec } from "@cobro/core/ports"
import { Schema } from "effect"
import * as Documents from "./documents/payment.js"
import { Doc, Flag, Millis } from "./sql.js"

/** A row of `cobro_payments` as written. */
export const PaymentRow = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  external_id: Schema.String,
  cvu: Schema.String,
  team_id: Schema.NullOr(Schema.String),
  created_ms: Millis,
  expires_ms: Millis,
  cvu_released: Flag,
  doc: Doc(Documents.Payment)
})

/** The row of `p` before encoding: what `PaymentRow` encodes. */
export const row = (p: P.Payment): typeof PaymentRow.Type => ({
  id: p.id,
  user_id: p.user_id,
  external_id: p.external_id,
  cvu: p.cvu,
  team_id: p.team_id,
  created_ms: p.creation_timestamp,
  expires_ms: p.expiration_timestamp,
  cvu_released: p.cvu_released,
  doc: p
})

const encodeColumns = TrustedCodec.encoder(PaymentRow)

/**
 * The row of `p` as `PaymentRow` encodes it, by the row's schema compiled without its checks
 * (core's `TrustedCodec`): every creation and every credited transfer writes a payment, and the
 * schema's checking pass was a measurable part of both (bench/results.md).
 */
export const encodedRow = (p: P.Payment): typeof PaymentRow.Encoded => encodeColumns(row(p))
