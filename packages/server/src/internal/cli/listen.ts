/**
 * `cobro listen --forward-to URL`: a merchant's webhook events, forwarded to a receiver on the
 * developer's machine, like `stripe listen`. It talks to a (remote, sandbox) cobro server only
 * through the merchant's own API: a token from `client_id`/`client_secret`
 * (`POST /users/{id}/tokens`, fetched again before it expires and after a 401), then
 * `GET /webhooks/deliveries` every `--interval`, keyset on the last event id seen. Each new
 * delivery's body is POSTed to `--forward-to`, signed like a real delivery (`X-Service-Signature`
 * and Standard Webhooks headers) with the session's signing secret, which it prints at start
 * (`--signing-secret` pins one; never the merchant's client secret). A forward is tried once: the
 * receiver's answer (or failure) is printed, and the server's own delivery is not touched. A
 * failed poll is printed and tried again; only failing to start (no token) ends the command.
 *
 * Only deliveries created after the start are forwarded (`--all` forwards the existing ones
 * first). Neither database nor server configuration is read.
 */
import { Options } from "@effect/cli"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Auth, Ids } from "@cobro/core"
import { type Api, Client } from "@cobro/http"
import { Signature } from "@cobro/webhooks"
import { Clock, Config, Console, Duration, Effect, Encoding, Option, Redacted, Ref, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { CommandFailed } from "./shared.js"

export interface ListenOptions {
  readonly apiUrl: string
  readonly userId: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly forwardTo: string
  readonly signingSecret: Option.Option<Redacted.Redacted<string>>
  readonly interval: Duration.Duration
  /** Forward the deliveries that exist at the start too. */
  readonly all: boolean
}

type Delivery = typeof Api.WebhookDeliveryWire.Type

/** What the command prints for a failed call: the server's envelope key and detail when it sent one. */
const failed = (what: string) => (error: unknown) =>
  new CommandFailed({
    message: `${what} failed: ${
      typeof error === "object" && error !== null && "key" in error
        ? `${String((error as { key: unknown }).key)}: ${String((error as { detail?: unknown }).detail ?? "")}`
        : String((error as { message?: unknown } | null)?.message ?? error)
    }`
  })

const isUnauthorized = (error: unknown) =>
  typeof error === "object" && error !== null && (error as { status?: unknown }).status === 401

/** Forwards `options`' merchant's new webhook deliveries until interrupted. */
export const listen = (options: ListenOptions) =>
  Effect.gen(function* () {
    const base = options.apiUrl.replace(/\/+$/, "")
    // A signing key must be unguessable: the operating system's randomness, not Effect's `Random`.
    const secret = Option.isSome(options.signingSecret)
      ? Redacted.value(options.signingSecret.value)
      : `whsec_${Encoding.encodeBase64Url(yield* Effect.sync(() => randomBytes(24)))}`
    const http = yield* HttpClient.HttpClient

    // The token, fetched before it expires (a minute ahead) and again after a 401.
    const token = yield* Ref.make<Option.Option<{ readonly value: string; readonly until: number }>>(
      Option.none()
    )
    const freshToken = Effect.gen(function* () {
      const anonymous = yield* Client.make({ baseUrl: base })
      const issued = yield* anonymous.userTokens
        .issue({
          path: { id: Ids.UserId.make(options.userId) },
          payload: new Auth.TokenRequest({
            client_id: options.clientId,
            client_secret: Redacted.value(options.clientSecret)
          })
        })
        .pipe(Effect.mapError(failed(`POST ${base}/users/${options.userId}/tokens`)))
      const data = issued.data
      const now = yield* Clock.currentTimeMillis
      const fresh = { value: data.token, until: now + (data.expires_in - 60) * 1000 }
      yield* Ref.set(token, Option.some(fresh))
      return fresh.value
    })
    const currentToken = Effect.gen(function* () {
      const held = yield* Ref.get(token)
      const now = yield* Clock.currentTimeMillis
      return Option.isSome(held) && held.value.until > now ? held.value.value : yield* freshToken
    })
    const authorized = <A, E>(call: (client: Client.Client) => Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const attempt = Effect.flatMap(
          Effect.flatMap(currentToken, (t) => Client.make({ baseUrl: base, token: t })),
          call
        )
        return yield* attempt.pipe(
          Effect.catchIf(isUnauthorized, () => Effect.zipRight(Ref.set(token, Option.none()), attempt))
        )
      })

    const page = (after: Option.Option<string>) =>
      authorized((client) =>
        client.webhookDeliveries.list({
          urlParams: { limit: 100, ...(Option.isSome(after) ? { after: Ids.EventId.make(after.value) } : {}) }
        })
      ).pipe(
        Effect.map((answer) => answer.data),
        Effect.mapError(failed(`GET ${base}/webhooks/deliveries`))
      )

    /** Every delivery after `after`, page by page; the last event id seen. */
    const drain = (after: Option.Option<string>, each: (d: Delivery) => Effect.Effect<void>) =>
      Effect.gen(function* () {
        let cursor = after
        for (;;) {
          const { deliveries, next_after } = yield* page(cursor)
          for (const d of deliveries) yield* each(d)
          if (deliveries.length > 0) cursor = Option.some(deliveries[deliveries.length - 1]!.event_id)
          if (next_after === null) return cursor
        }
      })

    const forward = (delivery: Delivery) =>
      Effect.gen(function* () {
        const body = JSON.stringify(delivery.payload)
        const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const started = yield* Clock.currentTimeMillis
        const request = HttpClientRequest.post(options.forwardTo).pipe(
          HttpClientRequest.setHeaders({
            ...Signature.headers({ secret, eventId: delivery.event_id, timestamp, body }),
            "user-agent": "cobro-listen"
          }),
          HttpClientRequest.bodyText(body, "application/json")
        )
        const outcome = yield* http.execute(request).pipe(
          Effect.scoped,
          Effect.timeout(Duration.seconds(10)),
          Effect.map((r) => String(r.status)),
          Effect.catchAll((e) =>
            Effect.succeed(`failed (${e._tag === "TimeoutException" ? "timeout" : e.message})`)
          )
        )
        const ms = (yield* Clock.currentTimeMillis) - started
        yield* Console.log(
          `--> ${delivery.type} [${delivery.event_id}] ${options.forwardTo} ${outcome} (${ms} ms)`
        )
      })

    // Where to start: after every delivery that exists now, unless asked for them too.
    const start = options.all ? Option.none<string>() : yield* drain(Option.none(), () => Effect.void)
    yield* Console.log(
      `Ready! Forwarding ${options.userId}'s webhook events from ${base} to ${options.forwardTo}`
    )
    yield* Console.log(`Your webhook signing secret for this session is ${secret}`)
    yield* Console.log(
      `Verify with it as you verify cobro's deliveries with your client secret (Receiver.verify, or Standard Webhooks with ${Signature.standardWebhooksSecret(secret)}).`
    )
    // The cursor moves past each delivery once forwarded; a failed poll (the server restarting, the
    // network) is printed and tried again at the next interval, from where it stopped.
    const cursor = yield* Ref.make(start)
    const poll = Effect.flatMap(Ref.get(cursor), (after) =>
      drain(after, (d) => Effect.zipRight(forward(d), Ref.set(cursor, Option.some(d.event_id))))
    )
    yield* poll.pipe(
      Effect.catchAll((e) =>
        Console.error(`${e.message}; trying again in ${Duration.format(options.interval)}`)
      ),
      Effect.repeat(Schedule.spaced(options.interval))
    )
  }).pipe(Effect.provide(FetchHttpClient.layer))

const fromEnv = <A>(option: Options.Options<A>, config: Config.Config<A>) =>
  Options.withFallbackConfig(option, config)

/** The command's options; credentials also from `COBRO_USER_ID`, `COBRO_CLIENT_ID`, `COBRO_CLIENT_SECRET`. */
export const listenOptions = {
  forwardTo: Options.text("forward-to").pipe(
    Options.withDescription("where to POST each event, e.g. http://localhost:4000/webhooks")
  ),
  apiUrl: fromEnv(
    Options.text("api-url").pipe(Options.withDescription("the cobro server (COBRO_API_URL)")),
    Config.string("COBRO_API_URL")
  ),
  userId: fromEnv(
    Options.text("user-id").pipe(Options.withDescription("your user id (COBRO_USER_ID)")),
    Config.string("COBRO_USER_ID")
  ),
  clientId: fromEnv(
    Options.text("client-id").pipe(Options.withDescription("your client id (COBRO_CLIENT_ID)")),
    Config.string("COBRO_CLIENT_ID")
  ),
  clientSecret: fromEnv(
    Options.text("client-secret").pipe(
      Options.withDescription("your client secret (better from COBRO_CLIENT_SECRET: not in shell history)")
    ),
    Config.string("COBRO_CLIENT_SECRET")
  ).pipe(Options.map(Redacted.make)),
  signingSecret: Options.text("signing-secret").pipe(
    Options.withDescription("sign forwards with this secret instead of a fresh one per session"),
    Options.map(Redacted.make),
    Options.optional
  ),
  interval: Options.integer("interval").pipe(
    Options.withDescription("seconds between polls (default 2)"),
    Options.withDefault(2)
  ),
  all: Options.boolean("all").pipe(
    Options.withDescription("forward the events that exist at the start too, oldest first")
  )
}
