/**
 * What an authenticator app needs from the server: a TOTP secret (RFC 6238: HMAC-SHA1, 6 digits,
 * 30-second steps), the `otpauth://` URI it enrols from, that URI as a QR code, and which time
 * step a typed code belongs to. A port: core imports only `effect`; the reference server backs it
 * with `otpauth` and `qrcode` (`@cobro/server`'s `Authenticator`).
 */
import { Context, type Effect, type Option } from "effect"

/** The length of a TOTP time step, in seconds (RFC 6238's default, what every app uses). */
export const STEP_SECONDS = 30

/** The time step of an instant (epoch milliseconds). */
export const stepAt = (epochMillis: number): number => Math.floor(epochMillis / 1000 / STEP_SECONDS)

export interface AuthenticatorShape {
  /** A new random secret (160 bits from a CSPRNG), in base32. */
  readonly newSecret: Effect.Effect<string>
  /** The `otpauth://totp/…` URI of `secret`, labelled `issuer:account`. */
  readonly uri: (input: {
    readonly secret: string
    readonly issuer: string
    readonly account: string
  }) => string
  /** The QR code of `text` as an SVG document. */
  readonly qrSvg: (text: string) => Effect.Effect<string>
  /**
   * The time step whose code `code` is, within `window` steps either side of `at` (epoch
   * milliseconds); none when it is no such step's code.
   */
  readonly stepOf: (input: {
    readonly secret: string
    readonly code: string
    readonly at: number
    readonly window: number
  }) => Option.Option<number>
}

export class Authenticator extends Context.Tag("@cobro/core/Authenticator")<
  Authenticator,
  AuthenticatorShape
>() {}
