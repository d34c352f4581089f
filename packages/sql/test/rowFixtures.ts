/**
 * Rows' domain values shared by the codec tests and `bench/codecs.ts`: a webhook delivery, a
 * transfer record and a stored user's document, each with the fields a case overrides.
 */
import { BankAccount, Ids, Money } from "@cobro/core"
import { TransferRepository as T, WebhookDeliveryRepository as W } from "@cobro/core/ports"
import { DateTime } from "effect"

export const at = (iso: string) => DateTime.unsafeMake(iso)

export const delivery = (fields: Partial<ConstructorParameters<typeof W.WebhookDelivery>[0]>) =>
  new W.WebhookDelivery({
    event_id: Ids.EventId.make("evt_0001"),
    type: "payment.updated",
    user_id: Ids.UserId.make("merchant-1"),
    signer: { kind: "merchant", user_id: Ids.UserId.make("merchant-1") },
    webhook_url: "https://merchant.example.com/hooks",
    body: '{"type":"payment.updated","data":{"id":"pay_1"}}',
    status: "pending",
    attempts: 0,
    round_attempts: 0,
    replays: 0,
    next_attempt_at: at("2026-11-27T13:05:09.123Z"),
    lease_owner: null,
    lease_until: null,
    last_attempt_at: null,
    last_status_code: null,
    last_error: null,
    created_at: at("2026-11-27T13:05:09.123Z"),
    finished_at: null,
    ...fields
  })

export const record = (fields: Partial<ConstructorParameters<typeof T.TransferRecord>[0]>) =>
  new T.TransferRecord({
    bank_transaction_id: Ids.BankTransactionId.make("SBX-0000002a0123456789abcdefdeadbeef"),
    cvu: BankAccount.makeCvu("0000003", "1234567890123"),
    amount: Money.make(150050n, "ARS"),
    target: "payment",
    target_id: "VAR-demo-order-1",
    received_at: DateTime.unsafeMake("2026-11-27T13:05:09.123Z"),
    ...fields
  })

/** A stored user's document (version 1, without `v`). */
export const userDocument = {
  user_id: "tienda-1",
  name: "Tienda Uno",
  email: "uno@example.com",
  cuit: "30712345671",
  account_status: "ACTIVE",
  alias_prefix: null,
  cancellation_period: null,
  cancellation_period_minutes: null,
  automatic_cancellation: false,
  transfer_tolerance: 0,
  payout_schedule: null,
  partner_id: null,
  creation_timestamp: "2026-11-25T04:42:26.930Z",
  last_modified_timestamp: "2026-11-25T04:42:26.935Z"
}
