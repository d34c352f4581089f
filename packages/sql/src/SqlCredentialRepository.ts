/**
 * `CredentialRepository` over `SqlClient`: users' credentials (the client secret stays sealed as
 * given) and access tokens by the SHA-256 of their text. Revocations are single conditional
 * UPDATEs, so a token is revoked once and counted once even when revocations race.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Credential, CredentialRepository as Port, Errors, Ids } from "@cobro/core"
import { type DateTime, Effect, Layer, Option, Schema } from "effect"
import { isUniqueViolation, millis, recoverable, toDateTime } from "./internal/sql.js"

interface CredentialRow {
  readonly user_id: string
  readonly client_id: string
  readonly client_secret_sealed: string
  readonly password_hash: string | null
  readonly created_ms: unknown
  readonly secret_rotated_ms: unknown
}

interface TokenRow {
  readonly token_hash: string
  readonly kind: string
  readonly user_id: string
  readonly partner_id: string | null
  readonly code_hash: string | null
  readonly created_ms: unknown
  readonly expires_ms: unknown
  readonly revoked_ms: unknown
}

const decodeKind = Schema.decodeUnknownSync(Credential.TokenKind)

const optionalTime = (value: unknown): DateTime.Utc | null => (value === null ? null : toDateTime(value))
const optionalMillis = (value: DateTime.Utc | null): number | null => (value === null ? null : millis(value))

const fromCredentialRow = (r: CredentialRow) =>
  new Credential.UserCredential({
    user_id: Ids.UserId.make(r.user_id),
    client_id: Ids.ClientId.make(r.client_id),
    client_secret_sealed: r.client_secret_sealed,
    password_hash: r.password_hash,
    creation_timestamp: toDateTime(r.created_ms),
    secret_rotated_at: toDateTime(r.secret_rotated_ms)
  })

const credentialRow = (c: Credential.UserCredential) => ({
  user_id: c.user_id,
  client_id: c.client_id,
  client_secret_sealed: c.client_secret_sealed,
  password_hash: c.password_hash,
  created_ms: millis(c.creation_timestamp),
  secret_rotated_ms: millis(c.secret_rotated_at)
})

const fromTokenRow = (r: TokenRow) =>
  new Credential.AccessToken({
    token_hash: r.token_hash,
    kind: decodeKind(r.kind),
    user_id: Ids.UserId.make(r.user_id),
    partner_id: r.partner_id === null ? null : Ids.PartnerId.make(r.partner_id),
    code_hash: r.code_hash,
    creation_timestamp: toDateTime(r.created_ms),
    expires_at: optionalTime(r.expires_ms),
    revoked_at: optionalTime(r.revoked_ms)
  })

const tokenRow = (t: Credential.AccessToken) => ({
  token_hash: t.token_hash,
  kind: t.kind,
  user_id: t.user_id,
  partner_id: t.partner_id,
  code_hash: t.code_hash,
  created_ms: millis(t.creation_timestamp),
  expires_ms: optionalMillis(t.expires_at),
  revoked_ms: optionalMillis(t.revoked_at)
})

const tokenConflict = (e: SqlError): Effect.Effect<never, Errors.Conflict> =>
  isUniqueViolation(e)
    ? Effect.fail(new Errors.Conflict({ key: "token.taken", message: "token collision" }))
    : Effect.die(e)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const forUpdate = sql.onDialectOrElse({ pg: () => sql` FOR UPDATE`, orElse: () => sql`` })
  const oneCredential = (rows: ReadonlyArray<CredentialRow>) =>
    Option.map(Option.fromNullable(rows[0]), fromCredentialRow)
  const count = (rows: ReadonlyArray<unknown>) => rows.length

  /**
   * The same `Conflict` keys, with the same precedence, as the memory adapter: the user's own
   * credential first, then the client id (databases differ in which constraint they report first).
   */
  const credentialConflict =
    (credential: Credential.UserCredential) =>
    (e: SqlError): Effect.Effect<never, Errors.Conflict> =>
      !isUniqueViolation(e)
        ? Effect.die(e)
        : sql`SELECT user_id FROM cobro_credentials WHERE user_id = ${credential.user_id}`.pipe(
            Effect.orDie,
            Effect.flatMap((rows) =>
              Effect.fail(
                rows.length > 0
                  ? new Errors.Conflict({
                      key: "credential.exists",
                      message: "the user already has a credential"
                    })
                  : new Errors.Conflict({ key: "client_id.taken", message: "the client id is taken" })
              )
            )
          )

  return Port.CredentialRepository.of({
    insertCredential: (credential) =>
      recoverable(sql)(sql`INSERT INTO cobro_credentials ${sql.insert(credentialRow(credential))}`).pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", credentialConflict(credential))
      ),
    updateCredential: (credential) => {
      const { user_id: _, ...fields } = credentialRow(credential)
      return sql`UPDATE cobro_credentials SET ${sql.update(fields)} WHERE user_id = ${credential.user_id}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )
    },
    findCredential: (user) =>
      sql<CredentialRow>`SELECT * FROM cobro_credentials WHERE user_id = ${user}`.pipe(
        Effect.map(oneCredential),
        Effect.orDie
      ),
    findCredentialForUpdate: (user) =>
      sql<CredentialRow>`SELECT * FROM cobro_credentials WHERE user_id = ${user}${forUpdate}`.pipe(
        Effect.map(oneCredential),
        Effect.orDie
      ),
    insertToken: (token) =>
      recoverable(sql)(sql`INSERT INTO cobro_access_tokens ${sql.insert(tokenRow(token))}`).pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", tokenConflict)
      ),
    findToken: (hash) =>
      sql<TokenRow>`SELECT * FROM cobro_access_tokens WHERE token_hash = ${hash}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromTokenRow)),
        Effect.orDie
      ),
    revokeToken: (hash, at) =>
      sql`UPDATE cobro_access_tokens SET revoked_ms = ${millis(at)}
        WHERE token_hash = ${hash} AND revoked_ms IS NULL RETURNING token_hash`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    revokeTokensOfCode: (codeHash, at) =>
      sql`UPDATE cobro_access_tokens SET revoked_ms = ${millis(at)}
        WHERE code_hash = ${codeHash} AND revoked_ms IS NULL RETURNING token_hash`.pipe(
        Effect.map(count),
        Effect.orDie
      ),
    revokeUserTokens: (user, at) =>
      sql`UPDATE cobro_access_tokens SET revoked_ms = ${millis(at)}
        WHERE user_id = ${user} AND kind = 'user' AND revoked_ms IS NULL RETURNING token_hash`.pipe(
        Effect.map(count),
        Effect.orDie
      )
  })
})

export const layer: Layer.Layer<Port.CredentialRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.CredentialRepository,
  make
)
