/**
 * Request schemas of the payment operations, shared by the services and the HTTP API so both
 * validate the same way.
 */
import { Schema } from "effect"
import { ExternalId, PartnerId, TeamId, UserId } from "../Ids.js"
import * as Money from "../Money.js"
import { ClientData } from "./Payment.js"
import { ArsInputNumber, HttpUrl, Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

/** A positive price with no more decimals than its currency has, at most the maximum. */
export const Price = Money.PriceInput.pipe(Schema.filter((m) => m.minor > 0n || "amount must be positive"))

export class CreatePaymentRequest extends Class<CreatePaymentRequest>("CreatePaymentRequest")({
  user_id: UserId,
  price: Price,
  /** Checked by the service: `transfer` only; deprecated methods answer 503. */
  payment_options: Schema.Array(Schema.String).pipe(
    Schema.minItems(1, { message: () => "must not be empty" })
  ),
  external_id: Schema.optional(ExternalId),
  webhook_url: Schema.optional(HttpUrl),
  redirect_url: Schema.optional(HttpUrl),
  motive: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
  team_id: Schema.optional(TeamId),
  tags: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(100))).pipe(Schema.maxItems(50))),
  partner_id: Schema.optional(PartnerId),
  client_data: Schema.optional(ClientData)
}) {}

export class RepriceRequest extends Class<RepriceRequest>("RepriceRequest")({
  currency: Schema.Literal("ARS"),
  /** Parsed by `Payments.reprice` (`Money.fromInput`), which names the field when it is refused. */
  amount: ArsInputNumber
}) {}

export class ExtendExpirationRequest extends Class<ExtendExpirationRequest>("ExtendExpirationRequest")({
  expiration_timestamp: Timestamp
}) {}

export class UpdateMetadataRequest extends Class<UpdateMetadataRequest>("UpdateMetadataRequest")({
  motive: Schema.String.pipe(Schema.maxLength(500))
}) {}
