/**
 * The sandbox's test-clock routes, mounted beside the API on the same router (so the API's edge
 * applies: body limits, content types, the error envelope, 404 for unknown routes). They exist
 * only in sandbox mode; in production the paths are unknown routes.
 *
 * - `GET /sandbox/clock` → `{message: "sandbox.clock.found", error: false, code: 200, data: {now, offset_seconds}}`
 * - `POST /sandbox/clock/advance` `{seconds}` → the same shape (`sandbox.clock.advanced`), after
 *   every piece of work that became due has run (expiries, payout schedules, split payouts,
 *   webhook deliveries).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Jobs } from "@cobro/core"
import { ApiError, Envelope } from "@cobro/http"
import type { Webhooks } from "@cobro/webhooks"
import { DateTime, Duration, Effect, ParseResult, Schema } from "effect"
import { summary } from "./Background.js"
import * as SandboxClock from "./SandboxClock.js"

export const maxAdvanceSeconds = Math.floor(Duration.toSeconds(SandboxClock.maxAdvance))

export class AdvanceRequest extends Schema.Class<AdvanceRequest>("AdvanceRequest")({
  seconds: Schema.Int.pipe(
    Schema.between(1, maxAdvanceSeconds, {
      message: () => `must be a whole number of seconds from 1 to ${maxAdvanceSeconds} (400 days)`
    })
  )
}) {}

/** `data` of both routes. */
export interface ClockView {
  /** The engine's time, ISO 8601. */
  readonly now: string
  /** How far the engine's clock is ahead of real time. */
  readonly offset_seconds: number
}

export const view = (reading: SandboxClock.ClockReading): ClockView => ({
  now: DateTime.formatIso(reading.now),
  offset_seconds: Math.floor(Duration.toSeconds(reading.offset))
})

const decodeBody = HttpServerRequest.schemaBodyJson(AdvanceRequest, { errors: "first" })

const invalidBody = (error: ParseResult.ParseError | { readonly _tag: "RequestError" }) => {
  if (error._tag === "RequestError") {
    return ApiError.ApiError.of(400, "request.body.malformed", "the body is not valid JSON", "body")
  }
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const field = issue === undefined || issue.path.length === 0 ? "body" : issue.path.map(String).join(".")
  return ApiError.ApiError.of(400, "request.invalid", issue?.message ?? "the request is invalid", field)
}

/** The routes, over the engine's jobs, the webhook service and the sandbox clock. */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const context = yield* Effect.context<SandboxClock.SandboxClock | Jobs.Jobs | Webhooks.Webhooks>()
    const clock = yield* SandboxClock.SandboxClock
    yield* router.get(
      "/sandbox/clock",
      Effect.map(clock.read, (reading) =>
        HttpServerResponse.unsafeJson(Envelope.ok("sandbox.clock.found", view(reading)))
      )
    )
    yield* router.post(
      "/sandbox/clock/advance",
      Effect.gen(function* () {
        const body = yield* Effect.mapError(decodeBody, invalidBody)
        const report = yield* SandboxClock.advanceAndRunDue(Duration.seconds(body.seconds)).pipe(
          Effect.provide(context)
        )
        yield* Effect.logInfo(
          `due work after the advance: jobs ${summary(report.jobs)}; webhooks ${summary(report.webhooks)}`
        )
        return HttpServerResponse.unsafeJson(Envelope.ok("sandbox.clock.advanced", view(report)))
      })
    )
  })
)
