/** The key client secrets are sealed under (`COBRO_SECRET_KEY`). */
import { Crypto } from "@cobro/core"
import { ConfigError, Either, Option, Redacted } from "effect"
import { invalid } from "./configReaders.js"
import { variables } from "./configVariables.js"

/** A required key in production (never the public sandbox key); the sandbox key otherwise when unset. */
export const resolveKey = (
  mode: "sandbox" | "production",
  text: Option.Option<Redacted.Redacted<string>>
): Either.Either<
  { readonly key: Redacted.Redacted<Uint8Array>; readonly sandbox: boolean },
  ConfigError.ConfigError
> => {
  if (Option.isNone(text) || Redacted.value(text.value).trim() === "") {
    return mode === "production"
      ? Either.left(
          ConfigError.MissingData(
            [variables.secretKey],
            "is required in production mode: 32 random bytes as base64 or 64 hex digits (e.g. `openssl rand -base64 32`)"
          )
        )
      : Either.right({ key: Crypto.sandboxKey, sandbox: true })
  }
  return Either.match(Crypto.decodeKey(Redacted.value(text.value)), {
    onLeft: (message) =>
      Either.left(
        invalid(variables.secretKey, `${message.replace(/^the server key /, "")} (32 bytes, base64 or hex)`)
      ),
    onRight: (bytes) => {
      const sandbox = Crypto.sandboxKey.pipe(Redacted.value, (k) => Crypto.timingSafeEqual(k, bytes))
      return mode === "production" && sandbox
        ? Either.left(
            invalid(variables.secretKey, "is the public sandbox key; production needs a secret one")
          )
        : Either.right({ key: Redacted.make(bytes), sandbox })
    }
  })
}
