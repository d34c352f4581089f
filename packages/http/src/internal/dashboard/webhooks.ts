/**
 * The dashboard's webhooks: the deliveries of the merchant's events (and, for a partner acting for
 * it, the partner's own events about it), each with every attempt (when, HTTP status, latency,
 * error), and a button that sends one again. Read and replayed through `WebhookDeliveries` with
 * the acting principal, as `GET /webhooks/deliveries` and `POST …/{event_id}/replay` do; a replay
 * counts against the same per-account limit as the API's (`RateLimits.replaysPerUser`).
 */
import { Ids, Outbox, WebhookDeliveries } from "@cobro/core"
import { WebhookDeliveryRepository } from "@cobro/core/ports"
import { Effect, Either, Option, Schema } from "effect"
import { html, type Html } from "../pages/html.js"
import { Limits } from "../rateLimit.js"
import * as V from "./sections.js"

const STATUS: Record<WebhookDeliveryRepository.DeliveryStatus, readonly [string, "ok" | "warn" | "err"]> = {
  pending: ["Pendiente", "warn"],
  delivered: ["Entregado", "ok"],
  dead: ["Sin entregar", "err"]
}

const statusOf = (text: string | undefined) =>
  Schema.decodeUnknownOption(WebhookDeliveryRepository.DeliveryStatus)(text)
const typeOf = (text: string | undefined) => Schema.decodeUnknownOption(Outbox.EventType)(text)
const eventIdOf = (text: string | undefined) => Schema.decodeUnknownOption(Ids.EventId)(text)

const statusChip = (status: WebhookDeliveryRepository.DeliveryStatus) => V.chip(...STATUS[status])

export const make = Effect.gen(function* () {
  const deliveries = yield* WebhookDeliveries.WebhookDeliveries
  const limits = yield* Limits

  const attemptRows = (attempts: WebhookDeliveries.DeliveryWithAttempts["attempts"]): ReadonlyArray<Html> =>
    attempts.map(
      (a) =>
        html`<tr>
          <td>${a.number}</td>
          <td>${V.when(a.attempted_at)}</td>
          <td>${a.status_code === null ? "Sin respuesta" : String(a.status_code)}</td>
          <td class="num">${a.duration_ms} ms</td>
          <td>${a.error ?? "—"}</td>
        </tr>`
    )

  const list = (ctx: V.Ctx) =>
    V.onClock(ctx)(
      Effect.gen(function* () {
        const status = Option.getOrUndefined(statusOf(V.param(ctx, "estado")))
        const type = Option.getOrUndefined(typeOf(V.param(ctx, "evento")))
        const after = Option.getOrUndefined(eventIdOf(V.param(ctx, "despues")))
        const page = yield* Effect.either(deliveries.list(ctx.principal, { status, type, after, limit: 20 }))
        if (Either.isLeft(page)) return V.notFound("webhooks", V.explain(page.left))
        const next = Option.match(page.right.next_after, {
          onNone: () => null,
          onSome: (id) => V.withQuery(`${ctx.base}/webhooks`, { estado: status, evento: type, despues: id })
        })
        return V.page(
          "webhooks",
          "Webhooks",
          html`<section class="card" aria-labelledby="title">
            <h1 id="title">Webhooks</h1>
            <p class="muted">
              Cada evento que te enviamos, con todos sus intentos. Abrí uno para ver el detalle o reenviarlo.
            </p>
            <form method="get" action="${ctx.base}/webhooks" class="filters">
              <label for="estado">Estado</label>
              <select id="estado" name="estado">
                <option value="" ${status === undefined ? "selected" : ""}>Todos</option>
                ${(["pending", "delivered", "dead"] as const).map(
                  (s) => html`<option value="${s}" ${status === s ? "selected" : ""}>${STATUS[s][0]}</option>`
                )}
              </select>
              <label for="evento">Evento</label>
              <select id="evento" name="evento">
                <option value="" ${type === undefined ? "selected" : ""}>Todos</option>
                ${Outbox.EventType.literals.map(
                  (t) => html`<option value="${t}" ${type === t ? "selected" : ""}>${t}</option>`
                )}
              </select>
              <button type="submit">Filtrar</button>
            </form>
            ${
              page.right.deliveries.length === 0
                ? html`<p>
                    No hay entregas${status === undefined && type === undefined ? "" : " con estos filtros"}.
                  </p>`
                : V.table(
                    "Entregas de webhooks",
                    ["Evento", "Creado", "Estado", "Intentos", "Último resultado"],
                    page.right.deliveries.map(({ delivery: d, attempts }) => {
                      const last = attempts.at(-1)
                      return html`<tr>
                        <td>
                          <a href="${ctx.base}/webhooks/${encodeURIComponent(d.event_id)}">${d.type}</a><br />
                          <span class="muted mono">${d.event_id}</span>
                        </td>
                        <td>${V.when(d.created_at)}</td>
                        <td>${statusChip(d.status)}</td>
                        <td class="num">${attempts.length}</td>
                        <td>
                          ${
                            last === undefined
                              ? "Sin intentos todavía"
                              : `${last.status_code === null ? "Sin respuesta" : `HTTP ${last.status_code}`} · ${last.duration_ms} ms`
                          }
                        </td>
                      </tr>`
                    })
                  )
            }
            ${V.pager(next)}
          </section>`
        )
      })
    )

  const detailPage = (ctx: V.Ctx, found: WebhookDeliveries.DeliveryWithAttempts, banner: Html) => {
    const d = found.delivery
    const path = `${ctx.base}/webhooks/${encodeURIComponent(d.event_id)}`
    return V.page(
      "webhooks",
      `Webhook ${d.type}`,
      html`${banner}
        <section class="card" aria-labelledby="title">
          <p class="eyebrow">Entrega de webhook</p>
          <h1 id="title">${d.type}</h1>
          <dl>
            <div class="field">
              <dt>Estado</dt>
              <dd>${statusChip(d.status)}</dd>
            </div>
            <div class="field">
              <dt>Evento</dt>
              <dd>${d.event_id}</dd>
            </div>
            <div class="field">
              <dt>URL</dt>
              <dd>${d.webhook_url}</dd>
            </div>
            <div class="field">
              <dt>Creado</dt>
              <dd>${V.when(d.created_at)}</dd>
            </div>
            ${
              d.next_attempt_at === null
                ? ""
                : html`<div class="field">
                    <dt>Próximo intento</dt>
                    <dd>${V.when(d.next_attempt_at)}</dd>
                  </div>`
            }
            <div class="field">
              <dt>Reenvíos</dt>
              <dd>${d.replays}</dd>
            </div>
          </dl>
          <form method="post" action="${path}/resend">
            ${V.csrfField(ctx)}
            <button type="submit" class="primary">Reenviar webhook</button>
          </form>
        </section>
        <section class="card" aria-labelledby="attempts">
          <h2 id="attempts">Intentos</h2>
          ${
            found.attempts.length === 0
              ? html`<p>Todavía no hubo intentos.</p>`
              : V.table(
                  "Intentos de entrega",
                  ["N.º", "Cuándo", "Estado HTTP", "Latencia", "Error"],
                  attemptRows(found.attempts)
                )
          }
        </section>
        <section class="card" aria-labelledby="payload">
          <h2 id="payload">Contenido</h2>
          <pre class="payload" tabindex="0">${prettyJson(d.body)}</pre>
        </section>`
    )
  }

  const detail = (ctx: V.Ctx) =>
    V.onClock(ctx)(
      Effect.gen(function* () {
        const id = eventIdOf(ctx.params["eventId"])
        const gone = V.notFound("webhooks", "No tenés una entrega de webhook con ese identificador.")
        if (Option.isNone(id)) return gone
        const found = yield* Effect.either(deliveries.get(ctx.principal, id.value))
        if (Either.isLeft(found)) return gone
        const banner =
          V.param(ctx, "reenviado") === "1"
            ? V.notice(
                "ok",
                "Webhook reenviado",
                "Lo volvemos a enviar desde el primer intento, con el mismo id de evento."
              )
            : html``
        return detailPage(ctx, found.right, banner)
      })
    )

  /** POST: sends the event again (Post/Redirect/Get to its page). */
  const resend = (ctx: V.Ctx) =>
    V.onClock(ctx)(
      Effect.gen(function* () {
        const id = eventIdOf(ctx.params["eventId"])
        const gone = V.notFound("webhooks", "No tenés una entrega de webhook con ese identificador.")
        if (Option.isNone(id)) return gone
        // Visible first: a replay of another's event is not counted against this account's limit.
        const found = yield* Effect.either(deliveries.get(ctx.principal, id.value))
        if (Either.isLeft(found)) return gone
        const limited = yield* Effect.either(limits.replay(ctx.principal.user_id))
        if (Either.isLeft(limited)) {
          return detailPage(
            ctx,
            found.right,
            V.notice(
              "err",
              "Reenviaste demasiados webhooks",
              `Esperá ${limited.left.retry_after ?? 60} segundos y volvé a intentar.`
            )
          )
        }
        const replayed = yield* Effect.either(deliveries.replay(ctx.principal, id.value))
        if (Either.isLeft(replayed)) return gone
        return V.redirect(
          V.withQuery(`${ctx.base}/webhooks/${encodeURIComponent(id.value)}`, { reenviado: "1" })
        )
      })
    )

  return { list, detail, resend } as const
})

/** The body indented when it is JSON (it always is), as is otherwise. */
const prettyJson = (body: string): string =>
  Either.match(
    Either.try(() => JSON.stringify(JSON.parse(body), null, 2)),
    { onLeft: () => body, onRight: (text) => text }
  )
