/**
 * The webhook tables of one in-memory store: the delivery rows (written by the memory `Outbox`'s
 * append, with its events) and the attempt log (written by the memory `WebhookDeliveryRepository`).
 * One pair of tables per `MemoryDb`, so both adapters over the same store share them.
 */
import { type Chunk, Effect, HashMap } from "effect"
import type { EventId } from "../Ids.js"
import { MemoryDb, type MemoryDbShape, makeRef, type TxRef } from "../internal/memoryDb.js"
import type { DeliveryAttempt, WebhookDelivery } from "./WebhookDelivery.js"

export interface WebhookTables {
  readonly deliveries: HashMap.HashMap<EventId, WebhookDelivery>
  readonly attempts: HashMap.HashMap<EventId, Chunk.Chunk<DeliveryAttempt>>
}

const byStore = new WeakMap<MemoryDbShape, TxRef<WebhookTables>>()

/** The webhook tables of the store in context, made on first use. */
export const webhookTables: Effect.Effect<TxRef<WebhookTables>, never, MemoryDb> = Effect.gen(function* () {
  const db = yield* MemoryDb
  const known = byStore.get(db)
  if (known !== undefined) return known
  const made = yield* makeRef<WebhookTables>({ deliveries: HashMap.empty(), attempts: HashMap.empty() })
  byStore.set(db, made)
  return made
})
