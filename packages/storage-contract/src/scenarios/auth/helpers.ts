/** The records, requests and engine steps the auth scenarios share. */
import { Credential, Crypto, Ids, Partner, Wire } from "@cobro/core"
import { DateTime, Effect, Encoding, Option, Schema } from "effect"
import { u1 } from "../fixtures.js"

export const sha256Hex = (text: string) =>
  Effect.gen(function* () {
    const crypto = yield* Crypto.Crypto
    return Encoding.encodeHex(yield* crypto.sha256(text))
  })

/** A partner as its wire form: its commission (a BigDecimal) compares by value, not by representation. */
export const wirePartner = (partner: Partner.Partner | Option.Option<Partner.Partner>) =>
  Schema.encodeSync(Partner.Partner)(Option.isOption(partner) ? Option.getOrThrow(partner) : partner)

export const at = (ms: number) => DateTime.unsafeMake(ms)

export const partner = (fields: Partial<ConstructorParameters<typeof Partner.Partner>[0]> = {}) =>
  new Partner.Partner({
    partner_id: Ids.PartnerId.make("par_one"),
    name: "Socio Uno",
    slug: "socio-uno",
    commission: Wire.rate("0.015"),
    redirect_url: "https://socio.example.com/callback",
    webhook_url: null,
    client_id: Ids.ClientId.make("cli_par_one"),
    client_secret_sealed: "v1.sealed-partner-secret",
    creation_timestamp: at(2_000),
    secret_rotated_at: at(2_000),
    ...fields
  })

export const token = (
  hash: string,
  fields: Partial<ConstructorParameters<typeof Credential.AccessToken>[0]> = {}
) =>
  new Credential.AccessToken({
    token_hash: hash,
    kind: "user",
    user_id: u1,
    partner_id: null,
    code_hash: null,
    creation_timestamp: at(3_000),
    expires_at: at(3_000 + 3_600_000),
    revoked_at: null,
    ...fields
  })

export const code = (
  hash: string,
  fields: Partial<ConstructorParameters<typeof Partner.AuthorizationCode>[0]> = {}
) =>
  new Partner.AuthorizationCode({
    code_hash: hash,
    partner_id: Ids.PartnerId.make("par_one"),
    user_id: u1,
    referred_user_id: "their-user-7",
    state: "st 1",
    creation_timestamp: at(4_000),
    expires_at: at(4_000 + 300_000),
    used_at: null,
    ...fields
  })
