/**
 * Core's `Authenticator` port on `otpauth` (RFC 6238 TOTP: SHA-1, 6 digits, 30-second steps, what
 * every authenticator app reads from an `otpauth://` URI) and `qrcode` (the URI as an SVG QR code,
 * no canvas needed). `otpauth` draws new secrets from the platform's CSPRNG (WebCrypto's
 * `getRandomValues`).
 */
import { Authenticator } from "@cobro/core"
import { Effect, Layer, Option } from "effect"
import { Secret, TOTP } from "otpauth"
import QRCode from "qrcode"

const totp = (secret: string, issuer = "", label = "") =>
  new TOTP({
    issuer,
    label,
    secret: Secret.fromBase32(secret),
    algorithm: "SHA1",
    digits: 6,
    period: Authenticator.STEP_SECONDS
  })

export const authenticator: Authenticator.AuthenticatorShape = {
  newSecret: Effect.sync(() => new Secret({ size: 20 }).base32),
  uri: ({ account, issuer, secret }) => totp(secret, issuer, account).toString(),
  qrSvg: (text) =>
    Effect.promise(() => QRCode.toString(text, { type: "svg", errorCorrectionLevel: "M", margin: 2 })),
  stepOf: ({ at, code, secret, window }) => {
    const delta = totp(secret).validate({ token: code, timestamp: at, window })
    return delta === null ? Option.none() : Option.some(Authenticator.stepAt(at) + delta)
  }
}

export const layer: Layer.Layer<Authenticator.Authenticator> = Layer.succeed(
  Authenticator.Authenticator,
  authenticator
)
