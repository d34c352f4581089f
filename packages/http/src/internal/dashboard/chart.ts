/**
 * The overview's volume chart, drawn on the server as SVG (no script, no other origin): one bar
 * per day, the last 7 days in the brand's color, with a `<title>` and `<desc>` that say in words
 * what it shows, and a visually hidden table of the same numbers for screen readers.
 */
import { html, type Html } from "../pages/html.js"

export interface Day {
  /** `2026-01-06`. */
  readonly day: string
  /** The volume in minor units (centavos). */
  readonly minor: bigint
  /** The volume as people read it (`$ 1.500,00`). */
  readonly label: string
}

const WIDTH = 600
const HEIGHT = 160
const TOP = 10

export const volumeChart = (days: ReadonlyArray<Day>, summary: string): Html => {
  const max = days.reduce((m, d) => (d.minor > m ? d.minor : m), 0n)
  const slot = WIDTH / Math.max(1, days.length)
  const bars = days.map((d, i) => {
    // Heights from exact minor units, scaled as numbers only for drawing.
    const h =
      max === 0n
        ? 0
        : Math.max(d.minor > 0n ? 2 : 0, (Number((d.minor * 1000n) / max) / 1000) * (HEIGHT - TOP))
    const recent = i >= days.length - 7
    return html`<rect
      x="${(i * slot + 1).toFixed(1)}"
      y="${(HEIGHT - h).toFixed(1)}"
      width="${Math.max(1, slot - 2).toFixed(1)}"
      height="${h.toFixed(1)}"
      fill="${recent ? "#0b57d0" : "#8ab4f8"}"
      ><title>${d.day}: ${d.label}</title></rect
    >`
  })
  return html`<svg
      class="chart"
      viewBox="0 0 ${WIDTH} ${HEIGHT}"
      role="img"
      aria-labelledby="chart-title chart-desc"
      xmlns="http://www.w3.org/2000/svg"
    >
      <title id="chart-title">Volumen diario de los últimos ${days.length} días</title>
      <desc id="chart-desc">${summary}</desc>
      <line
        x1="0"
        y1="${HEIGHT - 0.5}"
        x2="${WIDTH}"
        y2="${HEIGHT - 0.5}"
        stroke="#6e6e7a"
        stroke-width="1"
      />
      ${bars}
    </svg>
    <table class="visually-hidden">
      <caption>
        Volumen por día
      </caption>
      <thead>
        <tr>
          <th scope="col">Día</th>
          <th scope="col">Volumen</th>
        </tr>
      </thead>
      <tbody>
        ${days.map(
          (d) =>
            html`<tr>
              <td>${d.day}</td>
              <td>${d.label}</td>
            </tr>`
        )}
      </tbody>
    </table>`
}
