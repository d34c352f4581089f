/**
 * The secret of a delivery's signer (core's `signerOf`: the merchant, or the partner an event is
 * addressed to), read when the attempt is made so a rotated secret takes effect on the next one.
 */
import { Crypto } from "@cobro/core"
import { CredentialRepository, PartnerRepository, type WebhookDeliveryRepository } from "@cobro/core/ports"
import { Effect, Either } from "effect"

/** The secret text, or why there is none (recorded as the attempt's error). */
export type SigningSecret = Either.Either<string, string>

type Signer = WebhookDeliveryRepository.Signer

export const make = Effect.gen(function* () {
  const credentials = yield* CredentialRepository.CredentialRepository
  const partners = yield* PartnerRepository.PartnerRepository
  const crypto = yield* Crypto.Crypto

  /** The sealed client secret of the signer, or why there is none. */
  const sealedOf = (
    signer: Signer
  ): Effect.Effect<
    Either.Either<{ readonly client_secret_sealed: string; readonly client_id: string }, string>
  > =>
    signer.kind === "merchant"
      ? Effect.map(credentials.findCredential(signer.user_id), (found) =>
          Either.fromOption(found, () => `no signing secret: account ${signer.user_id} has no API credential`)
        )
      : Effect.map(partners.findById(signer.partner_id), (found) =>
          Either.fromOption(found, () => `no signing secret: partner ${signer.partner_id} not found`)
        )

  const secretOf = (signer: Signer): Effect.Effect<SigningSecret> =>
    Effect.flatMap(sealedOf(signer), (sealed): Effect.Effect<SigningSecret> =>
      Either.isLeft(sealed)
        ? Effect.succeed(Either.left(sealed.left))
        : Effect.map(crypto.decrypt(sealed.right.client_secret_sealed, sealed.right.client_id), (secret) =>
            Either.right(secret)
          )
    )

  /** A resolver that remembers what it read (for one worker run). */
  return () => {
    const cache = new Map<string, SigningSecret>()
    return (delivery: WebhookDeliveryRepository.WebhookDelivery): Effect.Effect<SigningSecret> => {
      const { signer } = delivery
      const key = signer.kind === "merchant" ? `user:${signer.user_id}` : `partner:${signer.partner_id}`
      const known = cache.get(key)
      if (known !== undefined) return Effect.succeed(known)
      return Effect.tap(secretOf(signer), (secret) => Effect.sync(() => cache.set(key, secret)))
    }
  }
})
