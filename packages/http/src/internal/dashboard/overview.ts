/**
 * `GET /dashboard`: the merchant's overview. Its balance (available and in transit, per currency,
 * `Balances.balance`), the volume received in the last 7 and 30 days with a chart of each day
 * (payments created in the last 30 days, read as a stream: memory stays flat), and the latest
 * payments. Days and "now" are the merchant's clock (its sandbox test clock, once moved).
 */
import { Balances, MerchantClocks, Money, type Payment, Payments } from "@cobro/core"
import { Chunk, DateTime, Effect, Either, Stream } from "effect"
import { html } from "../pages/html.js"
import { volumeChart, type Day } from "./chart.js"
import type { DashboardKit } from "./kit.js"
import { PATH } from "./kit.js"
import * as View from "./view.js"

const LATEST = 10
const DAYS = 30

interface Totals {
  readonly byDay: Map<string, bigint>
  readonly latest: Chunk.Chunk<Payment.Payment>
}

export const make = (dash: DashboardKit) =>
  Effect.gen(function* () {
    const balances = yield* Balances.Balances
    const payments = yield* Payments.Payments

    const overview = dash.merchantPage((session) =>
      MerchantClocks.run(session.principal.user_id)(
        Effect.gen(function* () {
          const user = session.principal.user_id
          const balance = yield* Effect.orDie(balances.balance(user, user))
          const now = yield* DateTime.now
          const since = DateTime.subtract(now, { days: DAYS - 1 })
          const start = DateTime.unsafeMake(`${View.dayOf(since)}T03:00:00.000Z`)
          const totals = yield* payments.list(user, { user_id: user, start_date: start }).pipe(
            Stream.runFold(
              { byDay: new Map<string, bigint>(), latest: Chunk.empty<Payment.Payment>() } as Totals,
              (acc, p) => {
                const received = p.totalReceived
                if (received.currency === "ARS" && received.minor > 0n) {
                  const day = View.dayOf(p.creation_timestamp)
                  acc.byDay.set(day, (acc.byDay.get(day) ?? 0n) + received.minor)
                }
                // Oldest first: keep the last `LATEST`.
                const latest = Chunk.append(acc.latest, p)
                return {
                  byDay: acc.byDay,
                  latest: Chunk.size(latest) > LATEST ? Chunk.drop(latest, 1) : latest
                }
              }
            ),
            Effect.orDie
          )
          const days: Array<Day> = []
          for (let i = DAYS - 1; i >= 0; i--) {
            const day = View.dayOf(DateTime.subtract(now, { days: i }))
            const minor = totals.byDay.get(day) ?? 0n
            days.push({ day, minor, label: View.money(Money.make(minor, "ARS")) })
          }
          const sum = (list: ReadonlyArray<Day>) =>
            Money.make(
              list.reduce((s, d) => s + d.minor, 0n),
              "ARS"
            )
          const week = sum(days.slice(-7))
          const month = sum(days)
          const latest = Chunk.toReadonlyArray(Chunk.reverse(totals.latest))
          return dash.shell(session, {
            title: "Resumen",
            section: "overview",
            body: html`<h1>Resumen</h1>
              <section aria-labelledby="balance-title">
                <h2 id="balance-title">Saldo</h2>
                <div class="cards">
                  ${balance.balances.map(
                    (b) =>
                      html`<div class="card">
                          <p class="eyebrow">Disponible (${b.currency})</p>
                          <p class="figure">
                            ${View.money(Either.getOrThrow(Money.fromString(b.available, b.currency)))}
                          </p>
                        </div>
                        <div class="card">
                          <p class="eyebrow">En tránsito (${b.currency})</p>
                          <p class="figure">
                            ${View.money(Either.getOrThrow(Money.fromString(b.in_transit, b.currency)))}
                          </p>
                        </div>`
                  )}
                </div>
              </section>
              <section class="card" aria-labelledby="volume-title">
                <h2 id="volume-title">Volumen recibido</h2>
                <div class="cards">
                  <div>
                    <p class="eyebrow">Últimos 7 días</p>
                    <p class="figure">${View.money(week)}</p>
                  </div>
                  <div>
                    <p class="eyebrow">Últimos 30 días</p>
                    <p class="figure">${View.money(month)}</p>
                  </div>
                </div>
                ${volumeChart(
                  days,
                  `Recibiste ${View.money(week)} en los últimos 7 días y ${View.money(month)} en los últimos 30.`
                )}
              </section>
              <section class="card" aria-labelledby="latest-title">
                <h2 id="latest-title">Últimos pagos</h2>
                ${View.paymentsTable(latest, "Últimos pagos")}
                <p><a href="${PATH}/payments">Ver todos los pagos</a></p>
              </section>`
          })
        })
      )
    )

    return { overview }
  })
