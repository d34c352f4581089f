/**
 * Partners: platforms that onboard merchants through a redirect and a code exchange and then
 * act for them with a `PAR-` token. A partner registers "with support" (the CLI) and receives a
 * client id and secret; a user's consent and a short-lived authorization code link the two.
 */
import { DateTime, Schema } from "effect"
import { ClientId, PartnerId, UserId } from "../Ids.js"
import { HttpUrl, Rate, Timestamp } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"

/** Lower-case letters, digits and dashes, 1-64 characters: how a partner appears in URLs and reads. */
export const PartnerSlug = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, {
    message: () =>
      "must be 1-64 characters of lowercase letters, digits and '-', not starting or ending with '-'"
  })
)

export class Partner extends Class<Partner>("Partner")({
  partner_id: PartnerId,
  name: Schema.String,
  slug: PartnerSlug,
  /** The partner's commission as a fraction (0.01 = 1 %), shown in the account's `partner_config`. */
  commission: Rate,
  /** Where onboarding sends the user back with `code` and `state`; matched exactly. */
  redirect_url: HttpUrl,
  /** Where the partner's events (account activated) are delivered; null: none are delivered. */
  webhook_url: Schema.NullOr(HttpUrl),
  client_id: ClientId,
  /** The client secret sealed with `Crypto.encrypt`, bound to `client_id`. */
  client_secret_sealed: Schema.String,
  creation_timestamp: Timestamp,
  secret_rotated_at: Timestamp
}) {}

/** A user's permission for a partner to act for them; granted again, it is refreshed. */
export class Consent extends Class<Consent>("Consent")({
  partner_id: PartnerId,
  user_id: UserId,
  granted_at: Timestamp
}) {}

/** How long an authorization code may be exchanged (SPEC: 5 minutes). */
export const codeLifetimeMinutes = 5

export class AuthorizationCode extends Class<AuthorizationCode>("AuthorizationCode")({
  /** Lower-case hex SHA-256 of the code text; the code itself is never stored. */
  code_hash: Schema.String,
  partner_id: PartnerId,
  user_id: UserId,
  /** The partner's own id for the user, sent to /authorize and returned at exchange. */
  referred_user_id: Schema.NullOr(Schema.String),
  /** The partner's opaque `state`, sent back on the redirect. */
  state: Schema.NullOr(Schema.String),
  creation_timestamp: Timestamp,
  expires_at: Timestamp,
  /** Set by the first exchange; a second exchange revokes the tokens issued from the code. */
  used_at: Schema.NullOr(Timestamp)
}) {
  isExpiredAt(now: DateTime.Utc): boolean {
    return !DateTime.lessThan(now, this.expires_at)
  }
}

/** A slug from a display name: "Mi Tienda S.A." → "mi-tienda-s-a". */
export const slugify = (name: string): string =>
  name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/g, "")
