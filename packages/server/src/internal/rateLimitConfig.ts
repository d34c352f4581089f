/**
 * The API's rate limits (`COBRO_RATE_LIMIT_*`, each `"N per DURATION"`) and where they count
 * (`COBRO_REDIS_URL`).
 */
import { HttpConfig } from "@cobro/http"
import { Config, ConfigError, Duration, Either, Option, Redacted } from "effect"
import { explained } from "./configReaders.js"
import { variables } from "./configVariables.js"

/** `"N per DURATION"` (`"10 per 1 minute"`): a count of at least 1 and a window of at least 1 second. */
const limitOf = (text: string): Option.Option<HttpConfig.Limit> => {
  const match = /^\s*(\d+)\s+per\s+(.+?)\s*$/i.exec(text)
  if (match === null) return Option.none()
  const limit = Number(match[1])
  return Option.flatMap(Duration.decodeUnknown(match[2]), (window) =>
    Number.isSafeInteger(limit) &&
    limit >= 1 &&
    Duration.isFinite(window) &&
    Duration.greaterThanOrEqualTo(window, Duration.seconds(1))
      ? Option.some({ limit, window })
      : Option.none()
  )
}

const limit = (name: string, fallback: HttpConfig.Limit) =>
  Config.string(name).pipe(
    Config.mapOrFail((text) =>
      // The path is the variable's already (`Config.string(name)`).
      Either.fromOption(limitOf(text), () =>
        ConfigError.InvalidData(
          [],
          `must be a count and a window of at least 1 second such as "10 per 1 minute", got "${text}"`
        )
      )
    ),
    Config.withDefault(fallback)
  )

const defaults = HttpConfig.defaultRateLimits

export const limits: Config.Config<HttpConfig.RateLimits> = Config.all({
  publicPerAddress: limit(variables.limitPublicPerAddress, defaults.publicPerAddress),
  publicPerUser: limit(variables.limitPaymentsPerUser, defaults.publicPerUser),
  tokensPerUser: limit(variables.limitTokensPerUser, defaults.tokensPerUser),
  failuresPerClient: limit(variables.limitFailuresPerClient, defaults.failuresPerClient),
  failuresPerAddress: limit(variables.limitFailuresPerAddress, defaults.failuresPerAddress),
  replaysPerUser: limit(variables.limitReplaysPerUser, defaults.replaysPerUser!)
})

export const redisUrl = Config.option(
  explained(
    variables.redisUrl,
    Config.url(variables.redisUrl).pipe(
      Config.validate({
        message: "",
        validation: (url) => (url.protocol === "redis:" || url.protocol === "rediss:") && url.hostname !== ""
      })
    ),
    () => "must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379"
  )
).pipe(Config.map(Option.map((url) => Redacted.make(url))))
