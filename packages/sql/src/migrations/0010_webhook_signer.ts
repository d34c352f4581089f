/**
 * Whose secret signs a webhook delivery (core's `signerOf`), stored with the delivery:
 * `signer_kind` `merchant` (`signer_id` the user id) or `partner` (the partner id). Deliveries
 * written before get theirs here: an "Account activated" event is signed by the partner that
 * onboarded its account, every other event by its account.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`ALTER TABLE cobro_webhook_deliveries
    ADD COLUMN signer_kind TEXT NOT NULL DEFAULT 'merchant' CHECK (signer_kind IN ('merchant', 'partner'))`)
  yield* sql.unsafe(`ALTER TABLE cobro_webhook_deliveries ADD COLUMN signer_id TEXT`)
  const partnerOf = sql.onDialectOrElse({
    pg: () => `(SELECT u.doc::json ->> 'partner_id' FROM cobro_users u WHERE u.user_id = d.user_id)`,
    orElse: () =>
      `(SELECT json_extract(u.doc, '$.partner_id') FROM cobro_users u WHERE u.user_id = d.user_id)`
  })
  yield* sql.unsafe(`UPDATE cobro_webhook_deliveries AS d SET signer_id = user_id`)
  yield* sql.unsafe(`UPDATE cobro_webhook_deliveries AS d SET signer_kind = 'partner', signer_id = ${partnerOf}
    WHERE d.type = 'account.activated' AND ${partnerOf} IS NOT NULL`)
})
