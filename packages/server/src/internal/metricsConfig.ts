/** Where and behind what `GET /metrics` is served (`COBRO_METRICS_TOKEN`, `COBRO_METRICS_ADDR`). */
import { Config, ConfigError, Either, Option, Redacted } from "effect"
import { invalid } from "./configReaders.js"
import { variables } from "./configVariables.js"

/** A TCP listening address: a host name or address (IPv6 without brackets), and a port (0: a free one). */
export interface ListenAddress {
  readonly host: string
  readonly port: number
}

/**
 * `host:port` (`127.0.0.1:9464`, `[::1]:9464`, `metrics.internal:9464`) as a `ListenAddress`; a
 * sentence saying what is wrong otherwise.
 */
export const parseListenAddress = (text: string): Either.Either<ListenAddress, string> => {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(text.trim())
  const port = Number(match?.[3])
  if (match === null || port > 65535)
    return Either.left(`must be host:port such as 127.0.0.1:9464 or [::1]:9464, got "${text}"`)
  return Either.right({ host: match[1] ?? match[2]!, port })
}

/** A bearer token for `/metrics`: printable, without spaces (it goes in an `Authorization` header). */
export const metricsToken = Config.option(Config.redacted(variables.metricsToken)).pipe(
  Config.mapOrFail((text) => {
    if (Option.isNone(text)) return Either.right(Option.none())
    const value = Redacted.value(text.value).trim()
    if (value === "") return Either.right(Option.none())
    return /^[\x21-\x7e]+$/.test(value)
      ? Either.right(Option.some(Redacted.make(value)))
      : Either.left(
          invalid(variables.metricsToken, "must be printable ASCII without spaces (a bearer token)")
        )
  })
)

export const metricsAddress = Config.option(
  Config.string(variables.metricsAddress).pipe(
    Config.mapOrFail((text) =>
      // The path is the variable's already (`Config.string(name)`).
      Either.mapLeft(parseListenAddress(text), (message) => ConfigError.InvalidData([], message))
    )
  )
)
