/**
 * `cobro listen`: a merchant's webhook events, forwarded to a receiver on the developer's machine
 * (`--forward-to`), or printed, like `stripe listen`. Two sources:
 *
 * - **the local database** (no `--api-url` nor `COBRO_API_URL`): the database the server uses,
 *   found as every command finds it (`COBRO_DATABASE_URL`, or `.cobro/cobro.db` here or in a
 *   directory above: where `npm start` made it), sandbox mode only. It reads the merchant's events
 *   from the outbox, where every event is written, so the events of a payment created without a
 *   `webhook_url` (which the server delivers nowhere) arrive too. The merchant is `--user-id`,
 *   `COBRO_USER_ID` or `demo`, the one `npm start` creates; no credentials.
 * - **a (remote, sandbox) cobro server** (`--api-url` or `COBRO_API_URL`), only through the
 *   merchant's own API: a token from `client_id`/`client_secret` (`POST /users/{id}/tokens`,
 *   fetched again before it expires and after a 401), then `GET /webhooks/deliveries` every
 *   `--interval`, keyset on the last event id seen. Only events that have a delivery are there:
 *   those of resources created with a `webhook_url`.
 *
 * Each new event's body is POSTed to `--forward-to`, signed like a real delivery
 * (`X-Service-Signature` and Standard Webhooks headers) with the session's signing secret, which
 * it prints at start (`--signing-secret` pins one; never the merchant's client secret). A forward
 * is tried once: the receiver's answer (or failure) is printed, and the server's own delivery is
 * not touched. A failed poll is printed and tried again; only failing to start ends the command.
 * At start it says where it reads, which events it forwards and why one would not arrive.
 *
 * Only events written after the start are forwarded (`--all` forwards the existing ones first).
 */
import { Options } from "@effect/cli"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Auth, Ids, Outbox } from "@cobro/core"
import { UserRepository } from "@cobro/core/ports"
import { type Api, Client } from "@cobro/http"
import { Signature } from "@cobro/webhooks"
import {
  Cause,
  Clock,
  Config,
  Console,
  Duration,
  Effect,
  Encoding,
  Option,
  Redacted,
  Ref,
  Schedule
} from "effect"
import { randomBytes } from "node:crypto"
import * as ServerConfig from "../../ServerConfig.js"
import { CommandFailed, withServices } from "./shared.js"

/** The merchant `npm start` creates in sandbox mode, which a bare `cobro listen` follows. */
const DEMO_USER = "demo"

export interface ListenOptions {
  /** Where to POST each event; none: print it. */
  readonly forwardTo: Option.Option<string>
  /** The server to ask (with the credentials); none: read the local database. */
  readonly apiUrl: Option.Option<string>
  readonly userId: Option.Option<string>
  readonly clientId: Option.Option<string>
  readonly clientSecret: Option.Option<Redacted.Redacted<string>>
  readonly signingSecret: Option.Option<Redacted.Redacted<string>>
  readonly interval: Duration.Duration
  /** Forward the events that exist at the start too. */
  readonly all: boolean
}

/** An event to forward: its id, type and the exact body a delivery of it sends. */
interface Event {
  readonly event_id: string
  readonly type: string
  readonly body: string
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

/** An option given on the command line, else the variable `name`. */
const orVariable = <A>(option: Option.Option<A>, config: Config.Config<A>) =>
  Option.isSome(option) ? Effect.succeed(option) : Config.option(config)

/** `--forward-to` for the first line: where the events go. */
const destination = (forwardTo: Option.Option<string>) =>
  Option.match(forwardTo, { onNone: () => "this terminal (no --forward-to: printed)", onSome: (url) => url })

/**
 * Forwards or prints one event, saying how it went; the session's signing secret signs it. Never
 * fails: a receiver that refuses or is down is printed.
 */
const sender = (forwardTo: Option.Option<string>, secret: string) =>
  Effect.gen(function* () {
    const http = yield* HttpClient.HttpClient
    return (event: Event) =>
      Option.match(forwardTo, {
        onNone: () => Console.log(`<-- ${event.type} [${event.event_id}] ${event.body}`),
        onSome: (url) =>
          Effect.gen(function* () {
            const started = yield* Clock.currentTimeMillis
            const timestamp = Math.floor(started / 1000)
            const request = HttpClientRequest.post(url).pipe(
              HttpClientRequest.setHeaders({
                ...Signature.headers({ secret, eventId: event.event_id, timestamp, body: event.body }),
                "user-agent": "cobro-listen"
              }),
              HttpClientRequest.bodyText(event.body, "application/json")
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
            yield* Console.log(`--> ${event.type} [${event.event_id}] ${url} ${outcome} (${ms} ms)`)
          })
      })
  })

/** The start's lines: where from, where to, the signing secret, and why an event would not arrive. */
const announce = (lines: {
  readonly from: string
  readonly forwardTo: Option.Option<string>
  readonly secret: string
  readonly notArriving: ReadonlyArray<string>
}) =>
  Console.log(
    [
      `Ready! ${lines.from}`,
      `  to ${destination(lines.forwardTo)}`,
      ...(Option.isSome(lines.forwardTo)
        ? [
            `Your webhook signing secret for this session is ${lines.secret}`,
            `Verify with it as you verify cobro's deliveries with your client secret (Receiver.verify, or Standard Webhooks with ${Signature.standardWebhooksSecret(lines.secret)}).`
          ]
        : []),
      "An event does not arrive when:",
      ...lines.notArriving.map((line) => `  - ${line}`),
      "  - it was written before this start (--all forwards those first);",
      "  - the receiver refuses it or is down: each event is tried once and its answer printed here."
    ].join("\n")
  )

/** Polls `poll` every `interval` for ever; a failed poll is printed and tried again. */
const everyInterval = <A, E, R>(poll: Effect.Effect<A, E, R>, interval: Duration.Duration) =>
  poll.pipe(
    Effect.asVoid,
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Console.error(
            `${Option.match(Cause.failureOption(cause), {
              onNone: () => Cause.pretty(cause),
              onSome: (e) => String((e as { message?: unknown }).message ?? e)
            })}; trying again in ${Duration.format(interval)}`
          )
    ),
    Effect.repeat(Schedule.spaced(interval))
  )

/** Events read from the outbox in one go at most. */
const OUTBOX_PAGE = 500

/**
 * The local database's events of one merchant, forwarded: its own events (not those addressed to
 * a partner), whether or not they have a webhook URL.
 */
const fromDatabase = (options: ListenOptions, secret: string, send: (event: Event) => Effect.Effect<void>) =>
  withServices((config) =>
    Effect.gen(function* () {
      if (config.mode !== "sandbox") {
        return yield* new CommandFailed({
          message: `cobro listen reads a sandbox database; this one runs in ${config.mode} mode. Against a server, pass --api-url and the merchant's credentials`
        })
      }
      const userId = Option.getOrElse(
        yield* orVariable(options.userId, Config.string("COBRO_USER_ID")),
        () => DEMO_USER
      )
      const users = yield* UserRepository.UserRepository
      if (Option.isNone(yield* users.findById(Ids.UserId.make(userId)))) {
        return yield* new CommandFailed({
          message: `no merchant ${userId} in this database: pass --user-id (or set COBRO_USER_ID) to one of \`cobro users list\`${userId === DEMO_USER ? " (npm start creates demo at its first start in sandbox mode)" : ""}`
        })
      }
      const outbox = yield* Outbox.Outbox
      /** Every event after `after`, page by page; the last position read. */
      const drain = (after: number, each: (event: Outbox.OutboxEvent) => Effect.Effect<void>) =>
        Effect.gen(function* () {
          let position = after
          for (;;) {
            const rows = yield* outbox.list(position, OUTBOX_PAGE)
            for (const row of rows) {
              if (row.event.user_id === userId && row.event.partner_id === null) yield* each(row.event)
              position = row.position
            }
            if (rows.length < OUTBOX_PAGE) return position
          }
        })
      const forward = (event: Outbox.OutboxEvent) =>
        send({ event_id: event.event_id, type: event.type, body: JSON.stringify(event.payload) })

      const start = options.all ? 0 : yield* drain(0, () => Effect.void)
      yield* announce({
        from: `Forwarding every event of merchant ${userId} written to ${ServerConfig.describeDatabase(config.database)}, also those of payments created without a webhook_url (which the server delivers nowhere)`,
        forwardTo: options.forwardTo,
        secret,
        notArriving: [
          `it is another merchant's (--user-id or COBRO_USER_ID picks one; default ${DEMO_USER}), or addressed to a partner (account.activated);`,
          "it is written to another database (COBRO_DATABASE_URL; run this where the server runs);"
        ]
      })
      const position = yield* Ref.make(start)
      yield* everyInterval(
        Effect.flatMap(Ref.get(position), (after) =>
          Effect.flatMap(
            drain(after, (event) => forward(event)),
            (last) => Ref.set(position, last)
          )
        ),
        options.interval
      )
    })
  )

/** The merchant's deliveries on a cobro server, read through its API, forwarded. */
const fromServer = (
  options: ListenOptions,
  apiUrl: string,
  secret: string,
  send: (event: Event) => Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const base = apiUrl.replace(/\/+$/, "")
    const needed = (option: Option.Option<string>, flag: string, variable: string) =>
      Effect.flatMap(orVariable(option, Config.string(variable)), (value) =>
        Option.match(value, {
          onSome: Effect.succeed,
          onNone: () =>
            Effect.fail(
              new CommandFailed({
                message: `cobro listen --api-url ${base} needs the merchant's ${flag} (or ${variable}); without --api-url it reads the local database and needs none`
              })
            )
        })
      )
    const userId = yield* needed(options.userId, "--user-id", "COBRO_USER_ID")
    const clientId = yield* needed(options.clientId, "--client-id", "COBRO_CLIENT_ID")
    const clientSecret = yield* needed(
      Option.map(options.clientSecret, Redacted.value),
      "--client-secret",
      "COBRO_CLIENT_SECRET"
    )

    // The token, fetched before it expires (a minute ahead) and again after a 401.
    const token = yield* Ref.make<Option.Option<{ readonly value: string; readonly until: number }>>(
      Option.none()
    )
    const freshToken = Effect.gen(function* () {
      const anonymous = yield* Client.make({ baseUrl: base })
      const issued = yield* anonymous.userTokens
        .issue({
          path: { id: Ids.UserId.make(userId) },
          payload: new Auth.TokenRequest({ client_id: clientId, client_secret: clientSecret })
        })
        .pipe(Effect.mapError(failed(`POST ${base}/users/${userId}/tokens`)))
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

    // Where to start: after every delivery that exists now, unless asked for them too.
    const start = options.all ? Option.none<string>() : yield* drain(Option.none(), () => Effect.void)
    yield* announce({
      from: `Forwarding ${userId}'s webhook events from ${base}`,
      forwardTo: options.forwardTo,
      secret,
      notArriving: [
        "it has no webhook delivery: the server writes one only for a resource created with a webhook_url, so a payment created without one sends nothing here (give it any webhook_url, or run a bare `cobro listen` where the server's database is: it reads every event);"
      ]
    })
    // The cursor moves past each delivery once forwarded; a failed poll (the server restarting, the
    // network) is printed and tried again at the next interval, from where it stopped.
    const cursor = yield* Ref.make(start)
    yield* everyInterval(
      Effect.flatMap(Ref.get(cursor), (after) =>
        drain(after, (d) =>
          Effect.zipRight(
            send({ event_id: d.event_id, type: d.type, body: JSON.stringify(d.payload) }),
            Ref.set(cursor, Option.some(d.event_id))
          )
        )
      ),
      options.interval
    )
  })

/** Forwards `options`' merchant's new webhook events until interrupted. */
export const listen = (options: ListenOptions) =>
  Effect.gen(function* () {
    // A signing key must be unguessable: the operating system's randomness, not Effect's `Random`.
    const secret = Option.isSome(options.signingSecret)
      ? Redacted.value(options.signingSecret.value)
      : `whsec_${Encoding.encodeBase64Url(yield* Effect.sync(() => randomBytes(24)))}`
    const apiUrl = yield* orVariable(options.apiUrl, Config.string("COBRO_API_URL"))
    const send = yield* sender(options.forwardTo, secret)
    return yield* Option.match(apiUrl, {
      onNone: () => fromDatabase(options, secret, send),
      onSome: (url) => fromServer(options, url, secret, send)
    })
  }).pipe(Effect.provide(FetchHttpClient.layer))

const optional = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

/** The command's options; the server and credentials also from `COBRO_API_URL`, `COBRO_USER_ID`, … */
export const listenOptions = {
  forwardTo: optional(
    "forward-to",
    "where to POST each event, e.g. http://localhost:4000/webhooks; without it each event is printed"
  ),
  apiUrl: optional(
    "api-url",
    "a cobro server to read through its API (COBRO_API_URL); without it the local database is read"
  ),
  userId: optional("user-id", "the merchant (COBRO_USER_ID); on the local database default demo"),
  clientId: optional("client-id", "with --api-url: your client id (COBRO_CLIENT_ID)"),
  clientSecret: optional(
    "client-secret",
    "with --api-url: your client secret (better from COBRO_CLIENT_SECRET: not in shell history)"
  ).pipe(Options.map(Option.map(Redacted.make))),
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
