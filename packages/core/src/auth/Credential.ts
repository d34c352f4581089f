/**
 * What proves who a caller is: a user's API credential (client id + sealed client secret, and
 * the password of the web app when the user registered there) and the access tokens issued to
 * users and partners. Only hashes of tokens and sealed secrets are ever stored.
 */
import { DateTime, Schema } from "effect"
import { ClientId, PartnerId, UserId } from "../Ids.js"
import { Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

export class UserCredential extends Class<UserCredential>("UserCredential")({
  user_id: UserId,
  client_id: ClientId,
  /** The client secret sealed with `Crypto.encrypt` (AES-256-GCM), bound to `client_id`. */
  client_secret_sealed: Schema.String,
  /** `Crypto.hashPassword` of the web-app password; null for users created without one (CLI). */
  password_hash: Schema.NullOr(Schema.String),
  creation_timestamp: Timestamp,
  /** When the client secret was last replaced. */
  secret_rotated_at: Timestamp
}) {}

export const TokenKind = Schema.Literal("user", "partner")
export type TokenKind = typeof TokenKind.Type

/** Partner tokens carry this prefix (SPEC); user tokens carry `USR-`. */
export const partnerTokenPrefix = "PAR-"
export const userTokenPrefix = "USR-"

export class AccessToken extends Class<AccessToken>("AccessToken")({
  /** Lower-case hex SHA-256 of the token text; the token itself is never stored. */
  token_hash: Schema.String,
  kind: TokenKind,
  user_id: UserId,
  /** The partner acting for `user_id` (partner tokens only). */
  partner_id: Schema.NullOr(PartnerId),
  /** Hash of the authorization code it was exchanged for (partner tokens only). */
  code_hash: Schema.NullOr(Schema.String),
  creation_timestamp: Timestamp,
  /** Null: does not expire (revocable only). */
  expires_at: Schema.NullOr(Timestamp),
  revoked_at: Schema.NullOr(Timestamp)
}) {
  /** Usable at `now`: not revoked and strictly before its expiry. */
  isActiveAt(now: DateTime.Utc): boolean {
    return this.revoked_at === null && (this.expires_at === null || DateTime.lessThan(now, this.expires_at))
  }
}
