/**
 * The dashboard's sandbox page (sandbox mode only; without the sandbox's services every route of
 * it is not found): the merchant's test clock, read and moved forward (which runs the merchant's
 * work that became due, as `POST /sandbox/clock/advance` does); a form that pays one of its CVUs
 * (the faucet, as `POST /sandbox/faucet/{cvu}`: a CVU that is not the merchant's is refused and
 * leaves nothing); and its sandbox bank accounts. Each form answers with a redirect to the page,
 * which says what happened.
 */
import { Faucet, SandboxAccounts, TestClocks } from "@cobro/bank-sandbox"
import { BankAccount, Money } from "@cobro/core"
import { Duration, Effect, Either, Option, Schema } from "effect"
import { html, type Html } from "../pages/html.js"
import * as V from "./sections.js"

/** Pesos with an optional decimal point or comma and up to two decimals; no thousands separators. */
const AMOUNT = /^\d{1,12}(?:[.,]\d{1,2})?$/

const UNITS = [
  ["minutos", "Minutos", 60],
  ["horas", "Horas", 3600],
  ["dias", "Días", 86_400]
] as const

const formatOffset = (offset: Duration.Duration): string => {
  const seconds = Math.floor(Duration.toSeconds(offset))
  if (seconds <= 0) return "en hora real"
  const days = Math.floor(seconds / 86_400)
  const hours = Math.floor((seconds % 86_400) / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  const parts = [
    days > 0 ? `${days} d` : "",
    hours > 0 ? `${hours} h` : "",
    minutes > 0 ? `${minutes} min` : "",
    seconds < 60 ? `${seconds} s` : ""
  ].filter((p) => p !== "")
  return `${parts.join(" ")} adelante de la hora real`
}

export const make = Effect.gen(function* () {
  const clocks = yield* Effect.serviceOption(TestClocks.TestClocks)
  const faucet = yield* Effect.serviceOption(Faucet.Faucet)
  const accounts = yield* Effect.serviceOption(SandboxAccounts.SandboxAccounts)
  const available = Option.isSome(clocks) || Option.isSome(faucet)

  const absent = V.notFound("sandbox", "El sandbox existe solo en el modo de pruebas.")

  const render = (ctx: V.Ctx, banner: Html, status = 200) =>
    Effect.gen(function* () {
      const owner = ctx.principal.user_id
      const reading = Option.isSome(clocks) ? Option.some(yield* clocks.value.read(owner)) : Option.none()
      const bankAccounts = Option.isSome(accounts)
        ? yield* Effect.orElseSucceed(accounts.value.list(owner), () => [])
        : null
      const path = `${ctx.base}/sandbox`
      return V.page(
        "sandbox",
        "Sandbox",
        html`<h1 id="title" class="page-title">Sandbox</h1>
          ${banner}
          ${Option.match(reading, {
            onNone: () => "",
            onSome: (r) =>
              html`<section class="card" aria-labelledby="clock">
                <h2 id="clock">Reloj de pruebas</h2>
                <dl>
                  <div class="field">
                    <dt>Hora de tu cuenta</dt>
                    <dd id="clock-now">${V.when(r.now)}</dd>
                  </div>
                  <div class="field">
                    <dt>Adelanto</dt>
                    <dd>${formatOffset(r.offset)}</dd>
                  </div>
                </dl>
                <p class="muted">
                  Adelantar el reloj vence cobros, corre los barridos y los pagos divididos pendientes y envía
                  los webhooks que correspondan, solo en tu cuenta.
                </p>
                <form method="post" action="${path}/clock">
                  ${V.csrfField(ctx)}
                  <label for="advance-amount">Cuánto adelantar</label>
                  <input
                    type="text"
                    inputmode="numeric"
                    id="advance-amount"
                    name="cantidad"
                    required
                    pattern="[0-9]{1,6}"
                    value="1"
                  />
                  <label for="advance-unit">Unidad</label>
                  <select id="advance-unit" name="unidad">
                    ${UNITS.map(([value, label]) => html`<option value="${value}" ${value === "horas" ? "selected" : ""}>${label}</option>`)}
                  </select>
                  <button type="submit" class="primary">Adelantar el reloj</button>
                </form>
              </section>`
          })}
          ${
            Option.isNone(faucet)
              ? ""
              : html`<section class="card" aria-labelledby="faucet">
                  <h2 id="faucet">Simular una transferencia</h2>
                  <p class="muted">
                    Pagá uno de tus CVU (un cobro, un cliente o un pago dividido) como si lo hiciera un
                    cliente desde su banco.
                  </p>
                  <form method="post" action="${path}/faucet">
                    ${V.csrfField(ctx)}
                    <label for="faucet-cvu">CVU a pagar</label>
                    <input
                      type="text"
                      inputmode="numeric"
                      id="faucet-cvu"
                      name="cvu"
                      required
                      autocomplete="off"
                      pattern="[0-9]{22}"
                      aria-describedby="faucet-cvu-hint"
                    />
                    <p class="hint" id="faucet-cvu-hint">Los 22 dígitos del CVU, sin espacios.</p>
                    <label for="faucet-amount">Monto en pesos</label>
                    <input
                      type="text"
                      inputmode="decimal"
                      id="faucet-amount"
                      name="monto"
                      required
                      autocomplete="off"
                      aria-describedby="faucet-amount-hint"
                    />
                    <p class="hint" id="faucet-amount-hint">Por ejemplo 1500 o 1500,50.</p>
                    <button type="submit" class="primary">Simular transferencia</button>
                  </form>
                </section>`
          }
          ${
            bankAccounts === null
              ? ""
              : html`<section class="card" aria-labelledby="bank-accounts">
                  <h2 id="bank-accounts">Cuentas bancarias de prueba</h2>
                  ${
                    bankAccounts.length === 0
                      ? html`<p>
                          No registraste cuentas. Las creás con <code>POST /sandbox/bank-accounts</code> y
                          reciben tus pagos salientes de prueba.
                        </p>`
                      : V.table(
                          "Cuentas bancarias de prueba",
                          ["CBU", "Alias", "Titular", "CUIT", "Alta"],
                          bankAccounts.map(
                            (a) =>
                              html`<tr>
                                <td class="mono">${a.cbu}</td>
                                <td class="mono">${a.alias}</td>
                                <td>${a.holder_name}</td>
                                <td class="mono">${a.cuit}</td>
                                <td>${V.when(a.creation_timestamp)}</td>
                              </tr>`
                          )
                        )
                  }
                </section>`
          }`,
        status
      )
    })

  const show = (ctx: V.Ctx) => {
    if (!available) return Effect.succeed(absent)
    const done = V.param(ctx, "hecho")
    const banner =
      done === "reloj"
        ? V.notice("ok", "Adelantaste el reloj", "Corrimos el trabajo que venció en tu cuenta.")
        : done === "acreditada"
          ? V.notice(
              "ok",
              "Transferencia acreditada",
              "El cobro, cliente o pago dividido de ese CVU la recibió."
            )
          : done === "rebotada"
            ? V.notice(
                "info",
                "Transferencia devuelta",
                "El CVU no esperaba ese monto y la transferencia se devolvió a quien la hizo."
              )
            : done === "repetida"
              ? V.notice("info", "Transferencia repetida", "Ya la habíamos recibido.")
              : html``
    return V.onClock(ctx)(render(ctx, banner))
  }

  const refuse = (ctx: V.Ctx, title: string, text: string, status = 400) =>
    V.onClock(ctx)(render(ctx, V.notice("err", title, text), status))

  const advance = (ctx: V.Ctx) =>
    Effect.gen(function* () {
      if (Option.isNone(clocks)) return absent
      const amount = V.field(ctx, "cantidad") ?? ""
      const unit = UNITS.find(([value]) => value === V.field(ctx, "unidad"))
      if (!/^\d{1,6}$/.test(amount) || Number(amount) < 1 || unit === undefined) {
        return yield* refuse(
          ctx,
          "No adelantamos el reloj",
          "Ingresá un número entero mayor que cero y elegí la unidad."
        )
      }
      const seconds = Number(amount) * unit[2]
      const request = Schema.decodeUnknownEither(TestClocks.AdvanceRequest)({ seconds })
      if (Either.isLeft(request)) {
        return yield* refuse(ctx, "No adelantamos el reloj", "Podés adelantarlo hasta 400 días por vez.")
      }
      const moved = yield* Effect.either(clocks.value.advance(ctx.principal.user_id, request.right))
      if (Either.isLeft(moved)) return yield* refuse(ctx, "No adelantamos el reloj", V.explain(moved.left))
      return V.redirect(V.withQuery(`${ctx.base}/sandbox`, { hecho: "reloj" }))
    })

  const pay = (ctx: V.Ctx) =>
    Effect.gen(function* () {
      if (Option.isNone(faucet)) return absent
      const cvu = Schema.decodeUnknownOption(BankAccount.Cvu)((V.field(ctx, "cvu") ?? "").replace(/\s/g, ""))
      if (Option.isNone(cvu)) {
        return yield* refuse(ctx, "CVU no válido", "Ingresá los 22 dígitos de uno de tus CVU.")
      }
      const amountText = V.field(ctx, "monto") ?? ""
      const amount = AMOUNT.test(amountText)
        ? Money.fromString(amountText.replace(",", "."), "ARS")
        : Either.left(undefined)
      if (Either.isLeft(amount) || amount.right.minor <= 0n) {
        return yield* refuse(
          ctx,
          "Monto no válido",
          "Ingresá un monto en pesos mayor que cero, con hasta dos decimales (por ejemplo 1500 o 1500,50)."
        )
      }
      const sent = yield* Effect.either(
        V.onClock(ctx)(
          faucet.value.send(
            ctx.principal.user_id,
            cvu.value,
            new Faucet.FaucetRequest({ amount: Money.toNumber(amount.right) })
          )
        )
      )
      if (Either.isLeft(sent)) {
        return yield* refuse(
          ctx,
          "No pudimos simular la transferencia",
          sent.left._tag === "NotFound" ? "Ese CVU no es de tu cuenta." : V.explain(sent.left),
          sent.left._tag === "NotFound" ? 404 : sent.left._tag === "InvalidInput" ? 400 : 409
        )
      }
      const outcome = sent.right.outcome._tag
      return V.redirect(
        V.withQuery(`${ctx.base}/sandbox`, {
          hecho: outcome === "Credited" ? "acreditada" : outcome === "Bounced" ? "rebotada" : "repetida"
        })
      )
    })

  return { available, show, advance, pay } as const
})
