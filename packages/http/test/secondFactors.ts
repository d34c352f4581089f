/**
 * The merchants' second factors for the in-process test server: `SecondFactors` over the engine's
 * storage, with TOTP from `otpauth` and `qrcode` (as the reference server's adapter) and a mailbox
 * that keeps every message sent (the reference server's tests use a real SMTP server instead).
 */
import { Authenticator, type Crypto, Mailer, SecondFactors } from "@cobro/core"
import { type SecondFactorRepository, type Transactor, type UserRepository } from "@cobro/core/ports"
import { Context, Effect, Layer, Option, Ref } from "effect"
import { Secret, TOTP } from "otpauth"
import QRCode from "qrcode"

const totp = (secret: string, issuer = "", label = "") =>
  new TOTP({ issuer, label, secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 })

const authenticator = Layer.succeed(Authenticator.Authenticator, {
  newSecret: Effect.sync(() => new Secret({ size: 20 }).base32),
  uri: ({ account, issuer, secret }) => totp(secret, issuer, account).toString(),
  qrSvg: (text) => Effect.promise(() => QRCode.toString(text, { type: "svg" })),
  stepOf: ({ at, code, secret, window }) => {
    const delta = totp(secret).validate({ token: code, timestamp: at, window })
    return delta === null ? Option.none() : Option.some(Authenticator.stepAt(at) + delta)
  }
})

/** Every message the test server "sent", oldest first. */
export class Mailbox extends Context.Tag("test/Mailbox")<
  Mailbox,
  { readonly messages: Effect.Effect<ReadonlyArray<Mailer.Message>> }
>() {}

const mailbox = Layer.effectContext(
  Effect.map(Ref.make<ReadonlyArray<Mailer.Message>>([]), (sent) =>
    Context.make(Mailer.Mailer, { send: (message) => Ref.update(sent, (all) => [...all, message]) }).pipe(
      Context.add(Mailbox, { messages: Ref.get(sent) })
    )
  )
)

/** The code of the last message sent to `to`. */
export const lastCode = (to: string): Effect.Effect<string, never, Mailbox> =>
  Effect.flatMap(Mailbox, (box) =>
    Effect.map(box.messages, (all) => {
      const text = all.filter((m) => m.to === to).at(-1)?.text ?? ""
      const code = /verification code is (\d{6})/.exec(text)?.[1]
      if (code === undefined) throw new Error(`no code was sent to ${to}`)
      return code
    })
  )

/** `SecondFactors` and its mailbox; needs the engine's storage, crypto and users. */
export const layer: Layer.Layer<
  SecondFactors.SecondFactors | Authenticator.Authenticator | Mailer.Mailer | Mailbox,
  never,
  | SecondFactorRepository.SecondFactorRepository
  | UserRepository.UserRepository
  | Crypto.Crypto
  | Transactor.Transactor
> = SecondFactors.SecondFactors.Default.pipe(Layer.provideMerge(Layer.merge(authenticator, mailbox)))
