/**
 * `SandboxAccountRepository` over `SqlClient` (table `cobro_sandbox_bank_accounts`, migration
 * 0017): one implementation for Postgres and SQLite. The number and the alias are unique
 * constraints, so two registrations of one account at once store it once; the loser's insert is
 * refused with `Conflict`.
 */
import { SqlClient } from "@effect/sql"
import { BankAccount, Ids, Spans } from "@cobro/core"
import { SandboxAccount, SandboxAccountRepository as Port } from "@cobro/bank-sandbox"
import { Effect, Layer, Option, Schema } from "effect"
import { findAll, findOne, insertUnique, Millis } from "./internal/sql.js"

/** A row as written and read; the account as the domain holds it. */
const Row = Schema.Struct({
  cbu: Schema.String,
  alias: Schema.String,
  user_id: Schema.String,
  holder_name: Schema.String,
  cuit: Schema.String,
  created_ms: Millis
})

const Stored = Schema.transform(Row, Schema.typeSchema(SandboxAccount.SandboxAccount), {
  strict: true,
  decode: ({ created_ms, ...rest }) =>
    SandboxAccount.SandboxAccount.make({
      ...rest,
      cbu: rest.cbu,
      alias: BankAccount.Alias.make(rest.alias),
      cuit: BankAccount.Cuit.make(rest.cuit),
      user_id: Ids.UserId.make(rest.user_id),
      creation_timestamp: created_ms
    }),
  encode: ({ creation_timestamp, ...rest }) => ({ ...rest, created_ms: creation_timestamp })
})

const columns = "cbu, alias, user_id, holder_name, cuit, created_ms"

export const make: Effect.Effect<Port.SandboxAccountRepository["Type"], never, SqlClient.SqlClient> =
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const insertRow = insertUnique(sql, "cobro_sandbox_bank_accounts", Stored)

    const byAddress = findOne({
      Request: Schema.String,
      Result: Stored,
      execute: (address) =>
        sql`SELECT ${sql.literal(columns)} FROM cobro_sandbox_bank_accounts
        WHERE cbu = ${address} OR alias = ${address} ORDER BY cbu LIMIT 1`
    })

    const ofUser = findAll({
      Request: Schema.String,
      Result: Stored,
      execute: (user) =>
        sql`SELECT ${sql.literal(columns)} FROM cobro_sandbox_bank_accounts
        WHERE user_id = ${user} ORDER BY created_ms, cbu`
    })

    const deleted = findOne({
      Request: Schema.Struct({ user: Schema.String, cbu: Schema.String }),
      Result: Schema.Struct({ cbu: Schema.String }),
      execute: ({ cbu, user }) =>
        sql`DELETE FROM cobro_sandbox_bank_accounts WHERE cbu = ${cbu} AND user_id = ${user} RETURNING cbu`
    })

    return Port.SandboxAccountRepository.of({
      insert: (account) =>
        insertRow(account, () => Effect.fail(Port.exists(account.cbu))).pipe(
          Spans.span("SandboxAccountRepository.insert")
        ),
      findByAddress: (address) =>
        byAddress(address).pipe(Spans.span("SandboxAccountRepository.findByAddress")),
      listOf: (user) => ofUser(user).pipe(Spans.span("SandboxAccountRepository.listOf")),
      remove: (user, cbu) =>
        deleted({ user, cbu }).pipe(Effect.map(Option.isSome), Spans.span("SandboxAccountRepository.remove"))
    })
  })

/** The repository (the database must already be migrated: `SqlStorage.layer` does it). */
export const layer: Layer.Layer<Port.SandboxAccountRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.SandboxAccountRepository,
  make
)
