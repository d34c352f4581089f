/** The operator's input as the engine takes it: typed ids and page sizes. */
import { Errors, Ids } from "@cobro/core"
import { Effect, ParseResult, Schema } from "effect"

/**
 * A value the operator typed (an id, a password), decoded with its schema: a malformed one (a
 * control character, too long) is an `InvalidInput` naming `field`, printed as such, not a defect
 * with a stack trace.
 */
export const idFrom =
  <A>(schema: Schema.Schema<A, string>, field: string) =>
  (value: string): Effect.Effect<A, Errors.InvalidInput> =>
    Schema.decodeUnknown(schema)(value).pipe(
      Effect.mapError((error) =>
        Errors.InvalidInput.of(
          field,
          ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "is invalid"
        )
      )
    )
export const userIdFrom = idFrom(Ids.UserId, "user_id")
export const eventIdFrom = idFrom(Ids.EventId, "event_id")
export const paymentIdFrom = idFrom(Ids.PaymentId, "payment_id")
export const partnerIdFrom = idFrom(Ids.PartnerId, "partner_id")

export interface ListInput {
  /** The last id of the previous page (ids are listed in order). */
  readonly after?: string | undefined
  readonly limit?: number | undefined
}

export const pageLimit = (limit: number | undefined) =>
  limit === undefined
    ? Effect.succeed(100)
    : Number.isInteger(limit) && limit >= 1 && limit <= 500
      ? Effect.succeed(limit)
      : Effect.fail(Errors.InvalidInput.of("limit", `must be an integer from 1 to 500, got ${limit}`))
