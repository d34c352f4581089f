/**
 * The framework floor of `bench/http.ts`: the stack cobro is built on (Effect's HttpApi on
 * `@effect/platform-node`, Schema decoding the body and encoding the answer, `@effect/sql` for
 * the statements) doing the raw baseline's work and nothing more. `POST /payments/` decodes a
 * create request, inserts the same ~1 KB row as `bench/raw-server.ts` and answers the same small
 * envelope. `GET /payments/:id` does the raw server's read the Effect way: bearer security as an
 * `HttpApiMiddleware` that looks the token up by its SHA-256 (`node:crypto`, as cobro's server
 * does), the payment's row decoded with `SqlSchema` (its document through `Schema.parseJson`),
 * the merchant's row likewise, and the answer encoded through its Schema. The gap between this
 * and the raw server is what the stack costs; the gap between this and cobro is what the engine
 * costs. `POST /cvu/:cvu/faucet` is the raw server's credit (`credit-statements.ts`) the Effect way:
 * the same bearer middleware, the body decoded by Schema, the payment's row by `SqlSchema`, the
 * statements through `@effect/sql` in `sql.withTransaction`, the answer encoded by Schema. Run as
 * a child process: `tsx bench/effect-server.ts <sqlite-file | postgres://…>`;
 * prints `listening <port> token <token>` (the token of the merchant `demo`, made at start).
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity
} from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient, SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Credit from "./credit-statements.js"

const target = process.argv[2]
if (target === undefined) throw new Error("usage: effect-server <sqlite file | postgres url>")

const Currency = Schema.Literal("ARS", "BRL", "USDT", "BNB")

const CreateRequest = Schema.Struct({
  user_id: Schema.String,
  external_id: Schema.String,
  price: Schema.Struct({ amount: Schema.Number, currency: Currency }),
  payment_options: Schema.Array(Schema.String),
  webhook_url: Schema.optional(Schema.String)
})

const Created = Schema.Struct({
  message: Schema.String,
  error: Schema.Literal(false),
  code: Schema.Literal(200),
  data: Schema.Struct({ id: Schema.String, cvu: Schema.String })
})

/** The stored document of a payment (what the create writes). */
const PaymentDoc = Schema.Struct({
  id: Schema.String,
  ...CreateRequest.fields,
  cvu: Schema.String,
  pad: Schema.String
})

/** A merchant's `user_info`, as cobro answers it. */
const UserInfo = Schema.Struct({
  email: Schema.String,
  fiat_payments_enabled: Schema.Boolean,
  payment_notifications: Schema.Boolean,
  user_id: Schema.String,
  provider: Schema.String,
  payment_url: Schema.String,
  payment_options: Schema.Array(Schema.String),
  expiration_timestamp: Schema.String
})

const Found = Schema.Struct({
  message: Schema.String,
  error: Schema.Literal(false),
  code: Schema.Literal(200),
  data: Schema.Struct({ ...PaymentDoc.fields, user_info: UserInfo })
})

class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { error: Schema.Literal(true), code: Schema.Literal(401) },
  HttpApiSchema.annotations({ status: 401 })
) {}

class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { error: Schema.Literal(true), code: Schema.Literal(404) },
  HttpApiSchema.annotations({ status: 404 })
) {}

class Duplicate extends Schema.TaggedError<Duplicate>()(
  "Duplicate",
  { error: Schema.Literal(true), code: Schema.Literal(409) },
  HttpApiSchema.annotations({ status: 409 })
) {}

const FaucetRequest = Schema.Struct({ amount: Schema.Number.pipe(Schema.positive()) })

const Credited = Schema.Struct({
  message: Schema.String,
  error: Schema.Literal(false),
  code: Schema.Literal(200),
  data: Schema.Struct({
    transaction_id: Schema.String,
    outcome: Schema.Literal("credited"),
    target: Schema.Literal("payment"),
    target_id: Schema.String
  })
})

class CurrentUser extends Context.Tag("floor/CurrentUser")<CurrentUser, string>() {}

class Authentication extends HttpApiMiddleware.Tag<Authentication>()("floor/Authentication", {
  failure: Unauthorized,
  provides: CurrentUser,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

class Payments extends HttpApiGroup.make("payments")
  .add(HttpApiEndpoint.post("create", "/payments/").setPayload(CreateRequest).addSuccess(Created))
  .add(
    HttpApiEndpoint.get("get", "/payments/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(Found)
      .addError(NotFound)
      .middleware(Authentication)
  )
  .add(
    HttpApiEndpoint.post("faucet", "/cvu/:cvu/faucet")
      .setPath(Schema.Struct({ cvu: Schema.String.pipe(Schema.pattern(/^\d{22}$/)) }))
      .setPayload(FaucetRequest)
      .addSuccess(Credited)
      .addError(NotFound)
      .addError(Duplicate)
      .middleware(Authentication)
  ) {}

class Api extends HttpApi.make("floor").add(Payments) {}

const DDL = [
  "CREATE TABLE IF NOT EXISTS floor_payments (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, external_id TEXT NOT NULL, cvu TEXT NOT NULL UNIQUE, created_ms BIGINT NOT NULL, doc TEXT NOT NULL, UNIQUE (user_id, external_id))",
  "CREATE TABLE IF NOT EXISTS floor_users (user_id TEXT PRIMARY KEY, email TEXT NOT NULL, doc TEXT NOT NULL)",
  "CREATE TABLE IF NOT EXISTS floor_tokens (token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES floor_users (user_id), created_ms BIGINT NOT NULL, expires_ms BIGINT, revoked_ms BIGINT)"
]

/** The token of the merchant `demo`, printed at start; only its hash is stored. */
const demoToken = `USR-${randomBytes(24).toString("hex")}`
const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex")

/** The tables, and the merchant `demo` with its token. */
const Setup = Layer.effectDiscard(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // As the raw server and cobro: WAL (the client's default) with synchronous = FULL.
    yield* sql.onDialectOrElse({
      sqlite: () => sql.unsafe("PRAGMA synchronous = FULL"),
      orElse: () => Effect.void
    })
    const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
    for (const statement of [...DDL, ...Credit.ddl(dialect, "floor")]) yield* sql.unsafe(statement)
    const userInfo: typeof UserInfo.Type = {
      email: "demo@merchant.example.com",
      fiat_payments_enabled: true,
      payment_notifications: true,
      user_id: "demo",
      provider: "cobro",
      payment_url: "https://pay.example.com",
      payment_options: ["transfer"],
      expiration_timestamp: "2030-01-01T00:00:00.000Z"
    }
    yield* sql`INSERT INTO floor_users ${sql.insert({
      user_id: "demo",
      email: userInfo.email,
      doc: JSON.stringify(userInfo)
    })} ON CONFLICT (user_id) DO NOTHING`
    yield* sql`INSERT INTO floor_tokens ${sql.insert({
      token_hash: sha256Hex(demoToken),
      user_id: "demo",
      created_ms: Date.now()
    })}`
  })
)

const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const findToken = SqlSchema.findOne({
      Request: Schema.Struct({ hash: Schema.String, now: Schema.Number }),
      Result: Schema.Struct({ user_id: Schema.String }),
      execute: ({ hash, now }) => sql`SELECT user_id FROM floor_tokens
        WHERE token_hash = ${hash} AND revoked_ms IS NULL AND (expires_ms IS NULL OR expires_ms > ${now})`
    })
    return Authentication.of({
      bearer: (token) =>
        findToken({ hash: sha256Hex(Redacted.value(token)), now: Date.now() }).pipe(
          Effect.orDie,
          Effect.flatMap(
            Option.match({
              onNone: () => Effect.fail(new Unauthorized({ error: true, code: 401 })),
              onSome: (row) => Effect.succeed(row.user_id)
            })
          )
        )
    })
  })
)

let sequence = 0

const PaymentsLive = HttpApiBuilder.group(Api, "payments", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const findPayment = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ user_id: Schema.String, doc: Schema.parseJson(PaymentDoc) }),
      execute: (id) => sql`SELECT user_id, doc FROM floor_payments WHERE id = ${id}`
    })
    const findMerchant = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ doc: Schema.parseJson(UserInfo) }),
      execute: (userId) => sql`SELECT doc FROM floor_users WHERE user_id = ${userId}`
    })
    const notFound = new NotFound({ error: true, code: 404 })
    const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
    const text = Credit.statements(dialect, "floor")
    const run = (statement: string, params: ReadonlyArray<unknown>) =>
      sql.unsafe<Record<string, unknown>>(statement, params)
    const findByCvu = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String, user_id: Schema.String, doc: Schema.String }),
      execute: (cvu) => run(text.payment, [cvu])
    })
    /** The credit's statements in one transaction: `Credit.Outcome`, as the raw server's. */
    const credit = (userId: string, cvu: string, minor: number) =>
      Effect.gen(function* () {
        const plan = Credit.plan(userId, cvu, minor, Option.getOrUndefined(yield* findByCvu(cvu)))
        if (plan._tag !== "Credit") return plan
        const inserted = yield* run(text.transfer, plan.transfer)
        if (inserted.length === 0) return { _tag: "Duplicate" } as const
        yield* run(text.updatePayment, plan.payment)
        if (dialect === "pg") {
          yield* run(text.ledger, [...plan.entry, ...plan.postings.flat(), ...plan.balances.flat()])
        } else {
          const [entry] = yield* run(text.entryReturning, plan.entry)
          yield* run(
            text.postings,
            plan.postings.flatMap((p) => [entry!["position"], ...p])
          )
          yield* run(text.balances, plan.balances.flat())
        }
        yield* run(text.outbox, plan.outbox)
        return {
          _tag: "Credited",
          transfer: String(plan.transfer[0]),
          payment: String(plan.payment[1])
        } as const
      }).pipe(sql.withTransaction)
    return handlers
      .handle("create", ({ payload }) => {
        const n = ++sequence
        const id = `floor-${process.pid}-${n}`
        // 22 digits, the process in them: a server started again on the same tables makes new ones.
        const cvu = `${String(process.pid % 10_000_000).padStart(7, "0")}${String(n).padStart(15, "0")}`
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
      .handle("faucet", ({ path, payload }) =>
        Effect.gen(function* () {
          const userId = yield* CurrentUser
          const outcome = yield* credit(userId, path.cvu, Math.round(payload.amount * 100)).pipe(Effect.orDie)
          if (outcome._tag === "NotFound") return yield* notFound
          if (outcome._tag === "Duplicate") return yield* new Duplicate({ error: true, code: 409 })
          return {
            message: "faucet.transfer.sent",
            error: false as const,
            code: 200 as const,
            data: {
              transaction_id: outcome.transfer,
              outcome: "credited" as const,
              target: "payment" as const,
              target_id: outcome.payment
            }
          }
        })
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const userId = yield* CurrentUser
          const payment = yield* findPayment(path.id).pipe(Effect.orDie)
          if (Option.isNone(payment) || payment.value.user_id !== userId) return yield* notFound
          const merchant = yield* findMerchant(userId).pipe(Effect.orDie)
          if (Option.isNone(merchant)) return yield* notFound
          return {
            message: "payment.found",
            error: false as const,
            code: 200 as const,
            data: { ...payment.value.doc, user_info: merchant.value.doc }
          }
        })
      )
  })
)

const client: Layer.Layer<SqlClient.SqlClient, unknown> = /^postgres(ql)?:\/\//.test(target)
  ? PgClient.layer({ url: Redacted.make(target), maxConnections: 10 })
  : SqliteClient.layer({ filename: target })

const server = createServer()

HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(PaymentsLive), Layer.provide(AuthenticationLive))),
  Layer.provide(Setup),
  Layer.provide(client),
  Layer.provide(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" })),
  Layer.tap(() =>
    Effect.sync(() => console.log(`listening ${(server.address() as AddressInfo).port} token ${demoToken}`))
  ),
  Layer.launch,
  NodeRuntime.runMain
)
