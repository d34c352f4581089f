/**
 * `CredentialRepository` over `SqlClient`: users' credentials (the client secret stays sealed as
 * given) and access tokens by the SHA-256 of their text. Revocations are single conditional
 * UPDATEs, so a token is revoked once and counted once even when revocations race.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Credential, Ids } from "@cobro/core"
import { CredentialRepository as Port } from "@cobro/core/ports"
import { Effect, Layer, Option, Schema } from "effect"
import * as RowCache from "./internal/rowCache.js"
import {
  Millis,
  NullableMillis,
  findAll,
  findByKey,
  inTransaction,
  insertUnique,
  write
} from "./internal/sql.js"

/** A row of `cobro_credentials`, as the credential it is. */
const CredentialRow = Schema.transform(
  Schema.Struct({
    user_id: Ids.UserId,
    client_id: Ids.ClientId,
    client_secret_sealed: Schema.String,
    password_hash: Schema.NullOr(Schema.String),
    created_ms: Millis,
    secret_rotated_ms: Millis
  }),
  Schema.typeSchema(Credential.UserCredential),
  {
    strict: true,
    decode: ({ created_ms, secret_rotated_ms, ...r }) =>
      new Credential.UserCredential({
        ...r,
        creation_timestamp: created_ms,
        secret_rotated_at: secret_rotated_ms
      }),
    encode: (c) => ({
      user_id: c.user_id,
      client_id: c.client_id,
      client_secret_sealed: c.client_secret_sealed,
      password_hash: c.password_hash,
      created_ms: c.creation_timestamp,
      secret_rotated_ms: c.secret_rotated_at
    })
  }
)

/** A row of `cobro_access_tokens`, as the token it is. */
const TokenRow = Schema.transform(
  Schema.Struct({
    token_hash: Schema.String,
    kind: Credential.TokenKind,
    user_id: Ids.UserId,
    partner_id: Schema.NullOr(Ids.PartnerId),
    code_hash: Schema.NullOr(Schema.String),
    created_ms: Millis,
    expires_ms: NullableMillis,
    revoked_ms: NullableMillis
  }),
  Schema.typeSchema(Credential.AccessToken),
  {
    strict: true,
    // The row's fields were just decoded by the struct above: not validated a second time by
    // the constructor (every authenticated request reads a token).
    decode: ({ created_ms, expires_ms, revoked_ms, ...r }) =>
      new Credential.AccessToken(
        { ...r, creation_timestamp: created_ms, expires_at: expires_ms, revoked_at: revoked_ms },
        true
      ),
    encode: (t) => ({
      token_hash: t.token_hash,
      kind: t.kind,
      user_id: t.user_id,
      partner_id: t.partner_id,
      code_hash: t.code_hash,
      created_ms: t.creation_timestamp,
      expires_ms: t.expires_at,
      revoked_ms: t.revoked_at
    })
  }
)

/** A revocation: the key it matches and when. */
const Revocation = Schema.Tuple(Schema.String, Millis)

export const make: Effect.Effect<Port.CredentialRepository["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient

    const insertCredential = insertUnique(sql, "cobro_credentials", CredentialRow)
    /**
     * The same `Conflict`s, with the same precedence, as the memory adapter: the user's own
     * credential first, then the client id (databases differ in which constraint they report first).
     */
    const credentialConflict = (credential: Credential.UserCredential) =>
      Effect.flatMap(credentialOf(false)(credential.user_id), (own) =>
        Effect.fail(own._tag === "Some" ? Port.conflicts.credentialExists() : Port.conflicts.clientIdTaken())
      )
    const credentialOf = findByKey(sql, "cobro_credentials", "user_id", CredentialRow, "*")
    const updateCredential = write({
      Request: CredentialRow,
      execute: ({ user_id, ...fields }) =>
        sql`UPDATE cobro_credentials SET ${sql.update(fields)} WHERE user_id = ${user_id}`
    })
    const insertToken = insertUnique(sql, "cobro_access_tokens", TokenRow)
    /**
     * Tokens read by hash outside a unit of work come from a short cache (`RowCache`, one second):
     * every authenticated request reads its token. A revocation through this instance forgets the
     * tokens it revoked at once; one made by another instance (another server, the CLI) reaches
     * this one within the cache's second (docs/decisions/0045-spans-and-unit-of-work-connection.md). Unknown hashes are not cached: a token
     * issued a moment later works at once.
     */
    const tokens = RowCache.make<Credential.AccessToken>()
    const readToken = findByKey(sql, "cobro_access_tokens", "token_hash", TokenRow, "*")(false)

    /** Revokes the live tokens `where` matches; the hashes revoked now, each forgotten by the cache. */
    const revoke = (where: (key: string) => Statement.Fragment) => {
      const run = findAll({
        Request: Revocation,
        Result: Schema.Struct({ token_hash: Schema.String }),
        execute: ([key, at]) => sql`UPDATE cobro_access_tokens SET revoked_ms = ${at}
          WHERE ${where(key)} AND revoked_ms IS NULL RETURNING token_hash`
      })
      return (request: typeof Revocation.Type) =>
        Effect.tap(run(request), (rows) => Effect.forEach(rows, (row) => tokens.forget(row.token_hash)))
    }
    const revokeOne = revoke((hash) => sql`token_hash = ${hash}`)
    const revokeOfCode = revoke((codeHash) => sql`code_hash = ${codeHash}`)
    const revokeOfUser = revoke((user) => sql`user_id = ${user} AND kind = 'user'`)

    return Port.CredentialRepository.of({
      insertCredential: (credential) => insertCredential(credential, () => credentialConflict(credential)),
      updateCredential,
      findCredential: credentialOf(false),
      findCredentialForUpdate: credentialOf(true),
      insertToken: (token) => insertToken(token, () => Effect.fail(Port.conflicts.tokenTaken())),
      findToken: (hash) =>
        Effect.flatMap(inTransaction, (inside) =>
          inside
            ? readToken(hash)
            : tokens
                .get(hash, Effect.map(readToken(hash), Option.getOrUndefined))
                .pipe(Effect.map(Option.fromNullable))
        ),
      revokeToken: (hash, at) => Effect.map(revokeOne([hash, at]), (rows) => rows.length > 0),
      revokeTokensOfCode: (codeHash, at) => Effect.map(revokeOfCode([codeHash, at]), (rows) => rows.length),
      revokeUserTokens: (user, at) => Effect.map(revokeOfUser([user, at]), (rows) => rows.length)
    })
  }
)

export const layer: Layer.Layer<Port.CredentialRepository, never, SqlClient.SqlClient> = Layer.effect(
  Port.CredentialRepository,
  make
)
