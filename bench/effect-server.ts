/**
 * The framework floor of `bench/http.ts`: the stack cobro is built on (Effect's HttpApi on
 * `@effect/platform-node`, Schema decoding the body and encoding the answer, `@effect/sql` for
 * the statement) doing the raw baseline's work and nothing more: `POST /payments/` decodes a
 * create request, inserts the same ~1 KB row as `bench/raw-server.ts` and answers the same small
 * envelope. The gap between this and the raw server is what the stack costs; the gap between
 * this and cobro is what the engine costs. Run as a child process:
 * `tsx bench/effect-server.ts <sqlite-file | postgres://…>`; prints `listening <port>`.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Redacted, Schema } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const target = process.argv[2]
if (target === undefined) throw new Error("usage: effect-server <sqlite file | postgres url>")

const CreateRequest = Schema.Struct({
  user_id: Schema.String,
  external_id: Schema.String,
  price: Schema.Struct({ amount: Schema.Number, currency: Schema.Literal("ARS", "BRL", "USDT", "BNB") }),
  payment_options: Schema.Array(Schema.String),
  webhook_url: Schema.optional(Schema.String)
})

const Created = Schema.Struct({
  message: Schema.String,
  error: Schema.Literal(false),
  code: Schema.Literal(200),
  data: Schema.Struct({ id: Schema.String, cvu: Schema.String })
})

class Payments extends HttpApiGroup.make("payments").add(
  HttpApiEndpoint.post("create", "/payments/").setPayload(CreateRequest).addSuccess(Created)
) {}

class Api extends HttpApi.make("floor").add(Payments) {}

let sequence = 0

const PaymentsLive = HttpApiBuilder.group(Api, "payments", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // As the raw server and cobro: WAL (the client's default) with synchronous = NORMAL.
    yield* sql.onDialectOrElse({
      sqlite: () => sql.unsafe("PRAGMA synchronous = NORMAL"),
      orElse: () => Effect.void
    })
    yield* sql.unsafe(
      "CREATE TABLE IF NOT EXISTS floor_payments (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, external_id TEXT NOT NULL, cvu TEXT NOT NULL UNIQUE, created_ms BIGINT NOT NULL, doc TEXT NOT NULL, UNIQUE (user_id, external_id))"
    )
    return handlers.handle("create", ({ payload }) => {
      const n = ++sequence
      const id = `floor-${process.pid}-${n}`
      const cvu = String(n).padStart(22, "0")
      const doc = JSON.stringify({ id, ...payload, cvu, pad: "x".repeat(800) })
      return sql`INSERT INTO floor_payments ${sql.insert({
        id,
        user_id: payload.user_id,
        external_id: payload.external_id,
        cvu,
        created_ms: Date.now(),
        doc
      })}`.pipe(
        Effect.orDie,
        Effect.as({
          message: "payment.created",
          error: false as const,
          code: 200 as const,
          data: { id, cvu }
        })
      )
    })
  })
)

const client = /^postgres(ql)?:\/\//.test(target)
  ? PgClient.layer({ url: Redacted.make(target), maxConnections: 10 })
  : SqliteClient.layer({ filename: target })

const server = createServer()

HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(PaymentsLive))),
  Layer.provide(client),
  Layer.provide(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" })),
  Layer.tap(() => Effect.sync(() => console.log(`listening ${(server.address() as AddressInfo).port}`))),
  Layer.launch,
  NodeRuntime.runMain
)
