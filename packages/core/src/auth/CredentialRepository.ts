/**
 * Storage of users' API credentials and of access tokens (user and partner). Rows hold only
 * sealed secrets and token hashes.
 */
import { Context, DateTime, Effect, Either, HashMap, Layer, Option } from "effect"
import { AccessToken, type UserCredential } from "./Credential.js"
import { Conflict } from "../Errors.js"
import type { UserId } from "../Ids.js"
import { makeRef, type MemoryDb } from "../internal/memoryDb.js"
import { conflicts as partnerConflicts } from "./PartnerRepository.js"

export class CredentialRepository extends Context.Tag("@cobro/core/CredentialRepository")<
  CredentialRepository,
  {
    /** Fails with `Conflict` when the user already has a credential or the client id is taken. */
    readonly insertCredential: (credential: UserCredential) => Effect.Effect<void, Conflict>
    /** Replaces the credential of `credential.user_id` (same client id). */
    readonly updateCredential: (credential: UserCredential) => Effect.Effect<void>
    readonly findCredential: (user: UserId) => Effect.Effect<Option.Option<UserCredential>>
    /** The same, locking the row for the rest of the unit of work. */
    readonly findCredentialForUpdate: (user: UserId) => Effect.Effect<Option.Option<UserCredential>>
    /** Fails with `Conflict` when the hash is taken (a random collision: never in practice). */
    readonly insertToken: (token: AccessToken) => Effect.Effect<void, Conflict>
    readonly findToken: (tokenHash: string) => Effect.Effect<Option.Option<AccessToken>>
    /** Revokes one token if it is not revoked yet; whether it was revoked now. */
    readonly revokeToken: (tokenHash: string, at: DateTime.Utc) => Effect.Effect<boolean>
    /** Revokes every live token exchanged for the code; how many were revoked. */
    readonly revokeTokensOfCode: (codeHash: string, at: DateTime.Utc) => Effect.Effect<number>
    /** Revokes every live user token (not partner tokens) of the user; how many were revoked. */
    readonly revokeUserTokens: (user: UserId, at: DateTime.Utc) => Effect.Effect<number>
  }
>() {}

/** The `Conflict`s the adapters raise (memory and SQL alike), defined once. */
export const conflicts = {
  credentialExists: () =>
    new Conflict({ key: "credential.exists", message: "the user already has a credential" }),
  clientIdTaken: partnerConflicts.clientIdTaken,
  tokenTaken: () => new Conflict({ key: "token.taken", message: "token collision" })
}

interface Tables {
  readonly credentials: HashMap.HashMap<UserId, UserCredential>
  /** client_id → user_id, the unique index. */
  readonly byClientId: HashMap.HashMap<string, UserId>
  readonly tokens: HashMap.HashMap<string, AccessToken>
}

const revoked = (token: AccessToken, at: DateTime.Utc) => new AccessToken({ ...token, revoked_at: at })

const revokeWhere = (
  tokens: HashMap.HashMap<string, AccessToken>,
  at: DateTime.Utc,
  match: (token: AccessToken) => boolean
): readonly [number, HashMap.HashMap<string, AccessToken>] => {
  let count = 0
  let next = tokens
  for (const token of HashMap.values(tokens)) {
    if (token.revoked_at === null && match(token)) {
      next = HashMap.set(next, token.token_hash, revoked(token, at))
      count++
    }
  }
  return [count, next]
}

export const makeMemory = Effect.gen(function* () {
  const tables = yield* makeRef<Tables>({
    credentials: HashMap.empty(),
    byClientId: HashMap.empty(),
    tokens: HashMap.empty()
  })
  const findCredential = (user: UserId) => Effect.map(tables.get, (t) => HashMap.get(t.credentials, user))
  return CredentialRepository.of({
    insertCredential: (credential) =>
      tables.updateOrFail((t) => {
        if (HashMap.has(t.credentials, credential.user_id)) return Either.left(conflicts.credentialExists())
        if (HashMap.has(t.byClientId, credential.client_id)) return Either.left(conflicts.clientIdTaken())
        return Either.right({
          ...t,
          credentials: HashMap.set(t.credentials, credential.user_id, credential),
          byClientId: HashMap.set(t.byClientId, credential.client_id, credential.user_id)
        })
      }),
    updateCredential: (credential) =>
      tables.update((t) =>
        HashMap.has(t.credentials, credential.user_id)
          ? { ...t, credentials: HashMap.set(t.credentials, credential.user_id, credential) }
          : t
      ),
    findCredential,
    findCredentialForUpdate: findCredential,
    insertToken: (token) =>
      tables
        .modify((t): readonly [boolean, Tables] =>
          HashMap.has(t.tokens, token.token_hash)
            ? [false, t]
            : [true, { ...t, tokens: HashMap.set(t.tokens, token.token_hash, token) }]
        )
        .pipe(Effect.flatMap((inserted) => (inserted ? Effect.void : Effect.fail(conflicts.tokenTaken())))),
    findToken: (hash) => Effect.map(tables.get, (t) => HashMap.get(t.tokens, hash)),
    revokeToken: (hash, at) =>
      tables.modify((t): readonly [boolean, Tables] => {
        const token = HashMap.get(t.tokens, hash)
        if (Option.isNone(token) || token.value.revoked_at !== null) return [false, t]
        return [true, { ...t, tokens: HashMap.set(t.tokens, hash, revoked(token.value, at)) }]
      }),
    revokeTokensOfCode: (codeHash, at) =>
      tables.modify((t): readonly [number, Tables] => {
        const [count, tokens] = revokeWhere(t.tokens, at, (token) => token.code_hash === codeHash)
        return [count, { ...t, tokens }]
      }),
    revokeUserTokens: (user, at) =>
      tables.modify((t): readonly [number, Tables] => {
        const [count, tokens] = revokeWhere(
          t.tokens,
          at,
          (token) => token.kind === "user" && token.user_id === user
        )
        return [count, { ...t, tokens }]
      })
  })
})

export const layerMemory: Layer.Layer<CredentialRepository, never, MemoryDb> = Layer.effect(
  CredentialRepository,
  makeMemory
)
