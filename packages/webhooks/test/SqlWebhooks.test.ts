/**
 * Several worker instances over one database (SQLite file, Postgres), as several server processes
 * would run: they share the due deliveries through leases, and an instance that dies mid-delivery
 * loses nothing — another one delivers the event once the lease has passed.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Engine } from "@cobro/core"
import { PgStorage } from "@cobro/sql-pg"
import { SqliteStorage } from "@cobro/sql-sqlite"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { Effect, Exit, Fiber, Layer, Redacted, Scope, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Webhooks } from "../src/index.js"
import { appendEvent, merchant, testReceiver, webhooksOver } from "./support.js"

const available = await Effect.runPromise(pgAvailable)
if (!available) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(
    `\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres webhook tests are SKIPPED !!!\n`
  )
}

/** Storage for one instance over the scenario's database; each call is a separate client. */
type Database = () => Layer.Layer<Engine.Storage, unknown>

const sqliteDatabase: Effect.Effect<Database, never, Scope.Scope> = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "cobro-webhooks-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ),
  (dir) => () => SqliteStorage.layer({ filename: path.join(dir, "cobro.db") })
)

const postgresDatabase: Effect.Effect<Database, never, Scope.Scope> = Effect.map(
  freshPgUrl,
  (url) => () => PgStorage.layer({ url: Redacted.make(url), maxConnections: 4 })
)

const instance = (database: Database, workerId: string) =>
  webhooksOver(database(), { workerId, batchSize: 5, concurrency: 5 })

const backends = [
  { name: "SQLite", database: sqliteDatabase, skip: false },
  { name: "Postgres", database: postgresDatabase, skip: !available }
] as const

for (const backend of backends) {
  describe.skipIf(backend.skip)(`webhook workers on ${backend.name}`, () => {
    it.scoped(
      "two instances share the due deliveries: each event is sent once, both do work",
      () =>
        Effect.gen(function* () {
          const database = yield* backend.database
          const a = yield* Layer.build(instance(database, "A"))
          const b = yield* Layer.build(instance(database, "B"))
          const deliverDue = Effect.flatMap(Webhooks.Webhooks, (w) => w.deliverDue())
          // Held until both instances have a batch in flight, so both must claim some.
          const receiver = yield* testReceiver(() => "hold")
          yield* Effect.provide(merchant(), a)
          for (let i = 0; i < 30; i++)
            yield* Effect.provide(appendEvent(receiver.url, { message: "x", n: i }), a)

          const onA = yield* Effect.fork(Effect.provide(deliverDue, a))
          yield* receiver.waitFor(5)
          const onB = yield* Effect.fork(Effect.provide(deliverDue, b))
          yield* receiver.waitFor(10)
          receiver.answer(() => ({ status: 200 }))
          receiver.release(200)
          const [ra, rb] = [yield* Fiber.join(onA), yield* Fiber.join(onB)]
          expect(ra.delivered + rb.delivered).toBe(30)
          expect(ra.delivered).toBeGreaterThanOrEqual(5)
          expect(rb.delivered).toBeGreaterThanOrEqual(5)
          expect(ra.superseded + rb.superseded + ra.errors + rb.errors).toBe(0)
          expect(receiver.received).toHaveLength(30)
          expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(30)

          const webhooks = yield* Effect.provide(Webhooks.Webhooks, b)
          const all = yield* webhooks.list({ limit: 100 })
          expect(all.every((d) => d.status === "delivered" && d.attempts === 1)).toBe(true)
          const workers = new Set<string>()
          for (const d of all) for (const at of yield* webhooks.attempts(d.event_id)) workers.add(at.worker)
          expect([...workers].sort()).toEqual(["A", "B"])
        }),
      60_000
    )

    it.scoped(
      "an instance that dies mid-delivery loses nothing: another delivers once its lease has passed",
      () =>
        Effect.gen(function* () {
          const database = yield* backend.database
          const receiver = yield* testReceiver(() => "hold")
          const scopeA = yield* Scope.make()
          const a = yield* Layer.buildWithScope(instance(database, "A"), scopeA)
          yield* Effect.provide(merchant(), a)
          const events = []
          for (let i = 0; i < 3; i++)
            events.push(yield* Effect.provide(appendEvent(receiver.url, { n: i }), a))

          // A sends the three events and dies before any answer: its process is gone.
          const dying = yield* Effect.fork(
            Effect.provide(
              Effect.flatMap(Webhooks.Webhooks, (w) => w.deliverDue()),
              a
            )
          )
          yield* receiver.waitFor(3)
          yield* Fiber.interrupt(dying)
          yield* Scope.close(scopeA, Exit.void)
          receiver.answer(() => ({ status: 200 }))

          const b = yield* Layer.build(instance(database, "B"))
          const webhooks = yield* Effect.provide(Webhooks.Webhooks, b)
          // A's leases still hold: B leaves the events alone.
          expect((yield* webhooks.deliverDue()).attempted).toBe(0)
          for (const e of events) {
            expect(yield* webhooks.get(e.event_id)).toMatchObject({
              status: "pending",
              lease_owner: "A",
              attempts: 0
            })
          }
          yield* TestClock.adjust("1 minute")
          expect(yield* webhooks.deliverDue()).toMatchObject({ attempted: 3, delivered: 3 })
          for (const e of events) {
            expect(yield* webhooks.get(e.event_id)).toMatchObject({ status: "delivered", attempts: 1 })
            // A never recorded anything; B's attempt is the one on record.
            expect((yield* webhooks.attempts(e.event_id)).map((x) => [x.worker, x.status_code])).toEqual([
              ["B", 200]
            ])
          }
          // At least once: the receiver saw each event twice, with the same id both times.
          expect(receiver.received).toHaveLength(6)
          for (const e of events) {
            expect(receiver.received.filter((r) => r.headers["webhook-id"] === e.event_id)).toHaveLength(2)
          }
        }),
      60_000
    )

    it.scoped(
      "production: a URL refused for what it is is stored dead at once; one refused after DNS stays pending with why",
      () =>
        Effect.gen(function* () {
          const database = yield* backend.database
          const receiver = yield* testReceiver()
          const production = webhooksOver(
            database(),
            { workerId: "P" },
            { mode: "production", resolve: async () => [{ address: "10.0.0.7", family: 4 }] }
          )
          const a = yield* Layer.build(production)
          yield* Effect.provide(merchant(), a)
          const literal = yield* Effect.provide(
            appendEvent(`https://[::ffff:127.0.0.1]:${receiver.port}/x`, {}),
            a
          )
          const named = yield* Effect.provide(appendEvent("https://hooks.example.test/cobro", {}), a)
          const report = yield* Effect.provide(
            Effect.flatMap(Webhooks.Webhooks, (w) => w.deliverDue()),
            a
          )
          expect(report).toMatchObject({ attempted: 2, dead: 1, retrying: 1 })
          // Read back through another instance: what the database holds.
          const webhooks = yield* Effect.provide(
            Webhooks.Webhooks,
            yield* Layer.build(instance(database, "R"))
          )
          const dead = yield* webhooks.get(literal.event_id)
          expect(dead).toMatchObject({
            status: "dead",
            attempts: 1,
            next_attempt_at: null,
            last_status_code: null,
            last_error: "refused: ::ffff:7f00:1 is a loopback address"
          })
          expect(dead.finished_at).not.toBeNull()
          const pending = yield* webhooks.get(named.event_id)
          expect(pending).toMatchObject({
            status: "pending",
            attempts: 1,
            finished_at: null,
            last_error: "refused: hooks.example.test resolves to 10.0.0.7, a private address"
          })
          expect(pending.next_attempt_at).not.toBeNull()
          expect((yield* webhooks.list({ status: "dead" })).map((d) => d.event_id)).toEqual([
            literal.event_id
          ])
          expect(receiver.received).toHaveLength(0)
        }),
      60_000
    )
  })
}
