/**
 * The readers every setting of `ServerConfig` is built from: each refuses a bad value with a
 * sentence in the operator's words, naming the variable (`problemsOf` reports it).
 */
import { Config, ConfigError, Duration, Either, Option } from "effect"

export const invalid = (name: string, message: string) => ConfigError.InvalidData([name], message)

/**
 * `read`, with the operator's words when it refuses a value: `explain` gets the value as given
 * (Effect's combinators say "Expected a boolean value but received …", naming neither the
 * variable's rule nor its default). The refusal is `Or(Effect's, ours)`; `problemsOf` reports ours.
 */
export const explained = <A>(name: string, read: Config.Config<A>, explain: (value: string) => string) =>
  Config.orElse(read, () =>
    Config.string(name).pipe(
      // The path is the variable's already (`Config.string(name)`).
      Config.mapOrFail((value) => Either.left(ConfigError.InvalidData([], explain(value))))
    )
  )

/** A yes/no variable, Effect's `Config.boolean`: true/1/yes/on or false/0/no/off. */
export const flag = (name: string, fallback: boolean) =>
  explained(name, Config.boolean(name), (value) => `must be true or false (on or off), got "${value}"`).pipe(
    Config.withDefault(fallback)
  )

/**
 * A finite duration of at least 1 second, `fallback` when unset; `examples` is what the refusal
 * suggests (`"5 seconds"`, quotes included).
 */
export const atLeastOneSecond = (name: string, examples: string, fallback: Duration.Duration) =>
  explained(
    name,
    Config.duration(name).pipe(
      Config.validate({
        message: "",
        validation: (d) => Duration.isFinite(d) && Duration.greaterThanOrEqualTo(d, Duration.seconds(1))
      })
    ),
    (value) =>
      Option.isSome(Duration.decodeUnknown(value))
        ? `must be at least 1 second and finite, got "${value}"`
        : `must be a duration such as ${examples}, got "${value}"`
  ).pipe(Config.withDefault(fallback))

const atLeast100Millis = (d: Duration.Duration) =>
  Duration.isFinite(d) && Duration.greaterThanOrEqualTo(d, Duration.millis(100))

/** How often some background work runs: a finite duration of at least 100 ms, `fallback` when unset. */
export const backgroundInterval = (name: string, fallback: Duration.Duration) =>
  explained(
    name,
    Config.duration(name).pipe(Config.validate({ message: "", validation: atLeast100Millis })),
    (value) =>
      Option.isSome(Duration.decodeUnknown(value))
        ? `must be at least 100 millis and finite, got "${value}"`
        : `must be a duration such as "5 seconds" or "500 millis", got "${value}"`
  ).pipe(Config.withDefault(fallback))
