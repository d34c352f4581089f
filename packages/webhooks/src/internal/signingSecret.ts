/**
 * Which secret signs a delivery, read when the attempt is made (so a rotated secret takes effect
 * on the next attempt): the client secret of the event's account; for `account.activated`, the
 * secret of the partner that onboarded the account, since the partner is who receives it.
 */
import {
  CredentialRepository,
  Crypto,
  PartnerRepository,
  UserRepository,
  type WebhookDeliveryRepository
} from "@cobro/core"
import { Effect, Either, Option } from "effect"

/** The secret text, or why there is none (recorded as the attempt's error). */
export type SigningSecret = Either.Either<string, string>

export const make = Effect.gen(function* () {
  const credentials = yield* CredentialRepository.CredentialRepository
  const users = yield* UserRepository.UserRepository
  const partners = yield* PartnerRepository.PartnerRepository
  const crypto = yield* Crypto.Crypto

  const ofUser = (delivery: WebhookDeliveryRepository.WebhookDelivery) =>
    Effect.gen(function* () {
      const credential = yield* credentials.findCredential(delivery.user_id)
      if (Option.isNone(credential)) {
        return Either.left(`no signing secret: account ${delivery.user_id} has no API credential`)
      }
      const { client_secret_sealed, client_id } = credential.value
      return Either.right(yield* crypto.decrypt(client_secret_sealed, client_id))
    })

  const ofPartner = (delivery: WebhookDeliveryRepository.WebhookDelivery) =>
    Effect.gen(function* () {
      const user = yield* users.findById(delivery.user_id)
      const partnerId = Option.flatMap(user, (u) => Option.fromNullable(u.partner_id))
      const partner = Option.isSome(partnerId) ? yield* partners.findById(partnerId.value) : Option.none()
      if (Option.isNone(partner)) {
        return Either.left(`no signing secret: account ${delivery.user_id} has no partner`)
      }
      const { client_secret_sealed, client_id } = partner.value
      return Either.right(yield* crypto.decrypt(client_secret_sealed, client_id))
    })

  /** A resolver that remembers what it read (for one worker run). */
  return () => {
    const cache = new Map<string, SigningSecret>()
    return (delivery: WebhookDeliveryRepository.WebhookDelivery): Effect.Effect<SigningSecret> => {
      const partner = delivery.type === "account.activated"
      const key = `${partner ? "partner-of" : "user"}:${delivery.user_id}`
      const known = cache.get(key)
      if (known !== undefined) return Effect.succeed(known)
      return Effect.tap(partner ? ofPartner(delivery) : ofUser(delivery), (secret) =>
        Effect.sync(() => cache.set(key, secret))
      )
    }
  }
})
