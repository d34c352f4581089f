/**
 * Argentine formatting for the hosted pages: amounts as `$ 1.500,00` and times in Buenos Aires.
 * Amounts are formatted from their exact decimal text (never through a float).
 */
import { Money } from "@cobro/core"
import { DateTime } from "effect"

const ars = new Intl.NumberFormat("es-AR", { style: "currency", currency: "ARS" })
const brl = new Intl.NumberFormat("es-AR", { style: "currency", currency: "BRL" })

/** `$ 1.500,00` for ARS, `R$ 10,00` for BRL, `10,50 USDT` for the others. */
export const money = (m: Money.Money): string => {
  // `format` accepts the decimal string exactly (Intl.NumberFormat v3); `Money.format` is "1500.00".
  const text = Money.format(m) as unknown as number
  switch (m.currency) {
    case "ARS":
      return ars.format(text)
    case "BRL":
      return brl.format(text)
    default: {
      const scale = Money.scaleOf[m.currency]
      const number = new Intl.NumberFormat("es-AR", {
        minimumFractionDigits: 2,
        maximumFractionDigits: scale
      })
      return `${number.format(text)} ${m.currency}`
    }
  }
}

const dateTime = new Intl.DateTimeFormat("es-AR", {
  timeZone: "America/Argentina/Buenos_Aires",
  day: "numeric",
  month: "long",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23"
})

/** `6 de enero de 2026, 21:00` in Buenos Aires time. */
export const when = (t: DateTime.Utc): string => dateTime.format(DateTime.toEpochMillis(t))
