/**
 * The tracing part of the server's configuration: the standard OpenTelemetry variables
 * (`OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`, …) as the OpenTelemetry specification reads them,
 * used by `ServerConfig`. Each variable is one `Config`; they are read only when an endpoint is set
 * and traces are exported: a platform-wide `OTEL_*` variable that cobro would not use stops nothing.
 */
import { Config, ConfigError, Duration, Either, Option, Redacted } from "effect"
/** The `OTEL_*` variables cobro reads, for messages and docs. */
export const variables = {
  otlpEndpoint: "OTEL_EXPORTER_OTLP_ENDPOINT",
  otlpTracesEndpoint: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  otlpHeaders: "OTEL_EXPORTER_OTLP_HEADERS",
  otlpTracesHeaders: "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  otlpProtocol: "OTEL_EXPORTER_OTLP_PROTOCOL",
  otlpTracesProtocol: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  otelServiceName: "OTEL_SERVICE_NAME",
  otelResourceAttributes: "OTEL_RESOURCE_ATTRIBUTES",
  otelTracesExporter: "OTEL_TRACES_EXPORTER",
  otelSdkDisabled: "OTEL_SDK_DISABLED",
  otelScheduleDelay: "OTEL_BSP_SCHEDULE_DELAY",
  otelMaxExportBatchSize: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"
} as const

/** Each variable's default and meaning, for `cobro serve --help`. */
export const variableHelp: {
  readonly [K in keyof typeof variables]: readonly [fallback: string, meaning: string]
} = {
  otlpEndpoint: ["none: tracing is off", "OTLP/HTTP collector; spans go to …/v1/traces"],
  otlpTracesEndpoint: ["OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces", "the URL spans are sent to, as it is"],
  otlpHeaders: ["none", "headers of every export, key=value,key=value"],
  otlpTracesHeaders: ["none", "headers of trace exports, over OTEL_EXPORTER_OTLP_HEADERS"],
  otlpProtocol: ["http/protobuf", "http/protobuf or http/json"],
  otlpTracesProtocol: ["OTEL_EXPORTER_OTLP_PROTOCOL", "the protocol of trace exports"],
  otelServiceName: ["cobro", "service.name of the spans"],
  otelResourceAttributes: ["none", "more resource attributes, key=value,key=value"],
  otelTracesExporter: ["otlp", "otlp, or none to turn tracing off"],
  otelSdkDisabled: ["false", "true turns tracing off"],
  otelScheduleDelay: ["5000", "milliseconds between exports"],
  otelMaxExportBatchSize: ["512", "spans that are sent at once without waiting"]
}

/** OTLP/HTTP trace export, from the standard `OTEL_*` variables. */
export interface Tracing {
  /** The URL spans are POSTed to (`…/v1/traces`). */
  readonly url: string
  readonly protocol: "http/protobuf" | "http/json"
  /** Sent with every export (often an API key of the collector's vendor). */
  readonly headers: Redacted.Redacted<Readonly<Record<string, string>>>
  readonly serviceName: string
  /** `OTEL_RESOURCE_ATTRIBUTES`, without `service.name`. */
  readonly resourceAttributes: Readonly<Record<string, string>>
  /** How often the spans ended since the last export are sent. */
  readonly exportInterval: Duration.Duration
  /** A batch this large is sent at once, without waiting for the interval. */
  readonly maxBatchSize: number
}

/**
 * An `OTEL_*` variable, its text trimmed and decoded by `decode`. Empty is unset, as the
 * specification reads them, so `Config.withDefault` and `Config.option` apply to it (Effect's
 * primitives would read an empty `OTEL_BSP_SCHEDULE_DELAY` as 0). A refusal names the variable:
 * the `mapOrFail` sits on `Config.string(name)`, whose path it takes.
 */
const otel = <A>(name: string, decode: (text: string) => Either.Either<A, string>): Config.Config<A> =>
  Config.string(name).pipe(
    Config.mapOrFail((text) =>
      text.trim() === ""
        ? Either.left(ConfigError.MissingData([], "is empty"))
        : Either.mapLeft(decode(text.trim()), (message) => ConfigError.InvalidData([], message))
    )
  )

const text = (name: string) => otel(name, Either.right)

/** The signal-specific variable (`…_TRACES_…`) when it is set, else the general one. */
const tracesOr = <A>(specific: Config.Config<A>, general: Config.Config<A>) =>
  Config.orElseIf(specific, { if: ConfigError.isMissingDataOnly, orElse: () => general })

/**
 * `then`, read only when `condition` reads true; none when it reads false. `Config` has no
 * `flatMap`, but `Config.orElse` reads its second branch only when the first fails: the first
 * fails exactly when `condition` holds (or is refused), and the second reads `condition` again,
 * to report its refusal, with `then`. `problemsOf` reports an `Or`'s second branch.
 */
const when = <A>(
  condition: Config.Config<boolean>,
  then: Config.Config<A>
): Config.Config<Option.Option<A>> =>
  Config.orElse(
    Config.mapOrFail(condition, (holds) =>
      holds ? Either.left(ConfigError.InvalidData([], "is read")) : Either.right(Option.none<A>())
    ),
    () => Config.zipWith(condition, then, (_, value) => Option.some(value))
  )

/** `key=value,key=value` (W3C Baggage syntax, values percent-encoded): headers and resource attributes. */
export const parseKeyValues = (text: string): Either.Either<Record<string, string>, string> => {
  const pairs: Record<string, string> = {}
  for (const entry of text.split(",")) {
    if (entry.trim() === "") continue
    const at = entry.indexOf("=")
    const key = at < 0 ? "" : entry.slice(0, at).trim()
    if (key === "")
      return Either.left(`must be a list of key=value separated by commas, got "${entry.trim()}"`)
    try {
      pairs[decodeURIComponent(key)] = decodeURIComponent(entry.slice(at + 1).trim())
    } catch {
      return Either.left(`has a value that is not valid percent-encoding: "${entry.trim()}"`)
    }
  }
  return Either.right(pairs)
}

/**
 * Where spans go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, or `OTEL_EXPORTER_OTLP_ENDPOINT`
 * with `/v1/traces` appended (the OTLP/HTTP rule).
 */
export const tracesUrl = (endpoint: string, signalSpecific: boolean): Either.Either<string, string> => {
  let url: URL
  try {
    url = new URL(endpoint.trim())
  } catch {
    return Either.left(`must be an absolute http(s) URL such as http://collector:4318, got "${endpoint}"`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Either.left(`must be an http or https URL (cobro exports OTLP over HTTP), got "${endpoint}"`)
  }
  if (signalSpecific) return Either.right(url.toString())
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/traces`
  return Either.right(url.toString())
}

/** An integer of at least `least`, written in decimal digits only. */
const integerAtLeast =
  (least: number) =>
  (text: string): Either.Either<number, string> =>
    /^\d+$/.test(text) && Number(text) >= least
      ? Either.right(Number(text))
      : Either.left(`must be an integer of at least ${least}, got "${text}"`)

/** One of `literals`, in any case (the specification's values are case-insensitive). */
const literal =
  <const L extends string>(literals: ReadonlyArray<L>, refusal: (value: string) => string) =>
  (text: string): Either.Either<L, string> => {
    const value = text.toLowerCase()
    const known = literals.find((l) => l === value)
    return known === undefined ? Either.left(refusal(value)) : Either.right(known)
  }

const protocolOf = (name: string) =>
  otel(
    name,
    literal(
      ["http/protobuf", "http/json"],
      (value) => `must be http/protobuf or http/json (cobro exports OTLP over HTTP, not gRPC), got "${value}"`
    )
  )

/** A `key=value` list; unset is empty. */
const keyValues = (name: string): Config.Config<Readonly<Record<string, string>>> =>
  otel(name, parseKeyValues).pipe(Config.withDefault({}))

/** Whether an endpoint is set (empty is unset) and `OTEL_SDK_DISABLED` is not `true`. */
const endpointSet = Config.all({
  endpoint: Config.option(text(variables.otlpEndpoint)),
  tracesEndpoint: Config.option(text(variables.otlpTracesEndpoint)),
  disabled: otel(variables.otelSdkDisabled, (value) => Either.right(value.toLowerCase() === "true")).pipe(
    Config.withDefault(false)
  )
}).pipe(Config.map((v) => (Option.isSome(v.endpoint) || Option.isSome(v.tracesEndpoint)) && !v.disabled))

/** Whether `otlp` is among `OTEL_TRACES_EXPORTER`'s exporters (a list; `none` turns tracing off). */
const exporting = otel(variables.otelTracesExporter, (value) => {
  const exporters = value
    .toLowerCase()
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "")
  const unknown = exporters.find((e) => e !== "otlp" && e !== "none")
  return unknown === undefined
    ? Either.right(exporters.includes("otlp"))
    : Either.left(`must be otlp or none (cobro exports traces over OTLP only), got "${unknown}"`)
}).pipe(Config.withDefault(true))

/** `OTEL_SERVICE_NAME`, else the `service.name` of `OTEL_RESOURCE_ATTRIBUTES`, else `cobro`. */
const resource = Config.all({
  serviceName: Config.option(text(variables.otelServiceName)),
  attributes: keyValues(variables.otelResourceAttributes)
}).pipe(
  Config.map(({ attributes: { "service.name": attributeName, ...resourceAttributes }, serviceName }) => ({
    serviceName: Option.getOrElse(serviceName, () => attributeName ?? "cobro"),
    resourceAttributes
  }))
)

/** The export settings, once traces are exported; every problem is reported at once. */
const settings: Config.Config<Tracing> = Config.all({
  url: tracesOr(
    otel(variables.otlpTracesEndpoint, (value) => tracesUrl(value, true)),
    otel(variables.otlpEndpoint, (value) => tracesUrl(value, false))
  ),
  protocol: tracesOr(protocolOf(variables.otlpTracesProtocol), protocolOf(variables.otlpProtocol)).pipe(
    Config.withDefault("http/protobuf" as const)
  ),
  headers: Config.all([keyValues(variables.otlpHeaders), keyValues(variables.otlpTracesHeaders)]).pipe(
    Config.map(([all, traces]) => Redacted.make<Readonly<Record<string, string>>>({ ...all, ...traces }))
  ),
  resource,
  exportInterval: otel(variables.otelScheduleDelay, integerAtLeast(100)).pipe(
    Config.withDefault(5000),
    Config.map(Duration.millis)
  ),
  maxBatchSize: otel(variables.otelMaxExportBatchSize, integerAtLeast(1)).pipe(Config.withDefault(512))
}).pipe(Config.map(({ resource, ...rest }) => ({ ...rest, ...resource })))

/** The tracing configuration: none when no endpoint is set or tracing is turned off. */
export const tracing: Config.Config<Option.Option<Tracing>> = when(
  endpointSet,
  when(exporting, settings)
).pipe(Config.map(Option.flatten))
