/**
 * The tracing part of the server's configuration: the standard OpenTelemetry variables
 * (`OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`, …) as the OpenTelemetry specification reads them,
 * used by `ServerConfig`. Read only when an endpoint is set: a platform-wide `OTEL_*` variable that
 * cobro would not use stops nothing.
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

const invalid = (name: string, message: string) => ConfigError.InvalidData([name], message)

/** An `OTEL_*` variable; empty is unset, as the OpenTelemetry specification reads them. */
const otel = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map(Option.filter((value) => value.trim() !== "")))

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

const positiveInteger = (name: string, text: Option.Option<string>, fallback: number, least: number) =>
  Option.match(text, {
    onNone: () => Either.right(fallback),
    onSome: (value) =>
      /^\d+$/.test(value.trim()) && Number(value.trim()) >= least
        ? Either.right(Number(value.trim()))
        : Either.left(invalid(name, `must be an integer of at least ${least}, got "${value}"`))
  })

/** The tracing configuration: none when no endpoint is set or tracing is turned off. */
export const tracing = Config.all({
  endpoint: otel(variables.otlpEndpoint),
  tracesEndpoint: otel(variables.otlpTracesEndpoint),
  headers: Config.option(Config.redacted(variables.otlpHeaders)),
  tracesHeaders: Config.option(Config.redacted(variables.otlpTracesHeaders)),
  protocol: otel(variables.otlpProtocol),
  tracesProtocol: otel(variables.otlpTracesProtocol),
  serviceName: otel(variables.otelServiceName),
  resourceAttributes: otel(variables.otelResourceAttributes),
  exporter: otel(variables.otelTracesExporter),
  disabled: otel(variables.otelSdkDisabled),
  scheduleDelay: otel(variables.otelScheduleDelay),
  maxBatchSize: otel(variables.otelMaxExportBatchSize)
}).pipe(
  Config.mapOrFail((v): Either.Either<Option.Option<Tracing>, ConfigError.ConfigError> => {
    const endpoint = Option.orElse(
      Option.map(v.tracesEndpoint, (text) => ({ text, name: variables.otlpTracesEndpoint, specific: true })),
      () => Option.map(v.endpoint, (text) => ({ text, name: variables.otlpEndpoint, specific: false }))
    )
    // Read only when traces are exported: a platform-wide OTEL_* that cobro would not use stops nothing.
    if (Option.isNone(endpoint) || Option.exists(v.disabled, (d) => d.trim().toLowerCase() === "true")) {
      return Either.right(Option.none())
    }
    const exporters = Option.getOrElse(v.exporter, () => "otlp")
      .split(",")
      .map((e) => e.trim().toLowerCase())
      .filter((e) => e !== "")
    const unknown = exporters.filter((e) => e !== "otlp" && e !== "none")
    if (unknown.length > 0) {
      return Either.left(
        invalid(
          variables.otelTracesExporter,
          `must be otlp or none (cobro exports traces over OTLP only), got "${unknown[0]}"`
        )
      )
    }
    if (!exporters.includes("otlp")) return Either.right(Option.none())
    const problems: Array<ConfigError.ConfigError> = []
    const check = <A>(
      name: string,
      result: Either.Either<A, string | ConfigError.ConfigError>,
      fallback: A
    ): A =>
      Either.getOrElse(
        Either.mapLeft(result, (e) => problems.push(typeof e === "string" ? invalid(name, e) : e)),
        () => fallback
      )
    const url = check(endpoint.value.name, tracesUrl(endpoint.value.text, endpoint.value.specific), "")
    const protocolName = Option.isSome(v.tracesProtocol)
      ? variables.otlpTracesProtocol
      : variables.otlpProtocol
    const protocolText = Option.orElse(v.tracesProtocol, () => v.protocol).pipe(
      Option.getOrElse(() => "http/protobuf"),
      (p) => p.trim().toLowerCase()
    )
    const protocol = check<Tracing["protocol"]>(
      protocolName,
      protocolText === "http/protobuf" || protocolText === "http/json"
        ? Either.right(protocolText)
        : Either.left(
            `must be http/protobuf or http/json (cobro exports OTLP over HTTP, not gRPC), got "${protocolText}"`
          ),
      "http/protobuf"
    )
    const headersOf = (name: string, text: Option.Option<Redacted.Redacted>) =>
      Option.match(text, {
        onNone: () => ({}),
        onSome: (r) => check(name, parseKeyValues(Redacted.value(r)), {})
      })
    const headers = {
      ...headersOf(variables.otlpHeaders, v.headers),
      ...headersOf(variables.otlpTracesHeaders, v.tracesHeaders)
    }
    const { "service.name": attributeName, ...resourceAttributes } = Option.match(v.resourceAttributes, {
      onNone: () => ({}) as Record<string, string>,
      onSome: (text) => check(variables.otelResourceAttributes, parseKeyValues(text), {})
    })
    const exportInterval = check(
      variables.otelScheduleDelay,
      positiveInteger(variables.otelScheduleDelay, v.scheduleDelay, 5000, 100),
      5000
    )
    const maxBatchSize = check(
      variables.otelMaxExportBatchSize,
      positiveInteger(variables.otelMaxExportBatchSize, v.maxBatchSize, 512, 1),
      512
    )
    if (problems.length > 0) return Either.left(problems.reduce((a, b) => ConfigError.And(a, b)))
    return Either.right(
      Option.some({
        url,
        protocol,
        headers: Redacted.make(headers),
        serviceName: Option.getOrElse(v.serviceName, () => attributeName ?? "cobro").trim(),
        resourceAttributes,
        exportInterval: Duration.millis(exportInterval),
        maxBatchSize
      })
    )
  })
)
