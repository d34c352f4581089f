/**
 * The dashboard's shell: the hosted pages' document (`../pages/layout.ts`: es-AR, the viewport,
 * the nonce'd stylesheet, the security headers) with the dashboard's navigation, the sandbox
 * badge on every page in sandbox mode, and the sign-out button (a POST form with the CSRF token).
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { html, type Html, raw } from "../pages/html.js"
import * as Layout from "../pages/layout.js"
import * as Csrf from "../pages/csrf.js"

/** The dashboard's own rules, after the hosted pages' stylesheet. */
const CSS = `
html.wide main{max-width:72rem}
.bar{background:var(--card);border-bottom:1px solid var(--line)}
.bar-inner{max-width:72rem;margin:0 auto;padding:.5rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem}
.brand{font-weight:700;letter-spacing:.02em;margin:0}
.who{margin:0 0 0 auto;font-size:.875rem;color:var(--muted);overflow-wrap:anywhere}
.bar form{margin:0}
.bar button{min-height:40px;padding:.25rem .75rem}
nav.menu{background:var(--card);border-bottom:1px solid var(--line);overflow-x:auto}
nav.menu ul{list-style:none;margin:0 auto;padding:0 .5rem;display:flex;gap:.25rem;max-width:72rem}
nav.menu li{margin:0}
nav.menu a{display:inline-flex;align-items:center;min-height:44px;padding:0 .75rem;color:var(--fg);text-decoration:none;
border-bottom:3px solid transparent;white-space:nowrap}
nav.menu a[aria-current=page]{border-bottom-color:var(--brand);color:var(--brand);font-weight:700}
.sandbox-badge{margin:0}
.cards{display:grid;gap:1rem;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));margin:0 0 1rem}
.cards .card{margin:0}
.figure{font-size:1.5rem;font-weight:700;font-variant-numeric:tabular-nums;margin:0;overflow-wrap:anywhere}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9375rem}
th,td{text-align:left;padding:.5rem;border-top:1px solid var(--line);vertical-align:top}
th{font-size:.8125rem;color:var(--muted);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td a{color:var(--brand);overflow-wrap:anywhere}
.filters{display:grid;gap:0 1rem;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));align-items:end}
.filters button{margin:.875rem 0 0}
select,input[type=date],input[type=search],input[type=number]{display:block;width:100%;font:inherit;min-height:44px;
padding:.5rem .75rem;border:1px solid #6e6e7a;border-radius:8px;background:#fff;color:var(--fg)}
.secret{font:600 1rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere;
background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:.5rem .75rem;margin:.25rem 0 .75rem}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.75rem 0 0}
.chart{width:100%;height:auto;max-height:12rem}
.narrow{max-width:28rem;margin:1rem auto}
.submit{margin-top:1.25rem}
.pager{display:flex;justify-content:space-between;gap:1rem;margin:1rem 0 0}
.chip{display:inline-block;font-size:.8125rem;font-weight:700;border-radius:999px;padding:.0625rem .5rem;
border:1px solid currentColor;white-space:nowrap}
.chip.ok{color:var(--ok);background:var(--ok-bg)}
.chip.warn{color:var(--warn);background:var(--warn-bg)}
.chip.err{color:var(--err);background:var(--err-bg)}
.chip.info{color:var(--info);background:var(--info-bg)}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.page-title{margin:0 0 1rem}
.payload{margin:0;padding:.75rem;background:var(--bg);border:1px solid var(--line);border-radius:8px;
overflow:auto;max-height:24rem;font-size:.8125rem;white-space:pre-wrap;overflow-wrap:anywhere}
.table-wrap:focus-visible{outline:3px solid #1a73e8;outline-offset:2px}
`

export type Section =
  "overview" | "payments" | "customers" | "payouts" | "webhooks" | "developers" | "sandbox" | "partner"

const MENU: ReadonlyArray<readonly [Section, string, string]> = [
  ["overview", "Resumen", "/dashboard"],
  ["payments", "Pagos", "/dashboard/payments"],
  ["customers", "Clientes", "/dashboard/customers"],
  ["payouts", "Retiros", "/dashboard/payouts"],
  ["webhooks", "Webhooks", "/dashboard/webhooks"],
  ["developers", "Desarrolladores", "/dashboard/developers"]
]

export interface Shell {
  readonly nonce: string
  /** The page's `<title>` (before " · cobro"). */
  readonly title: string
  readonly body: Html
  /** The section the menu marks as current; none on pages outside the menu. */
  readonly section?: Section | undefined
  /** Who is signed in (the bar shows it); absent on the sign-in pages. */
  readonly signedIn?:
    | {
        readonly label: string
        /** The CSRF token of the sign-out form. */
        readonly csrf: string
        /** The principal is a partner: its menu replaces the merchant's. */
        readonly partner: boolean
        /**
         * A partner acting for a merchant it opened: the merchant's menu, without what no `PAR-`
         * token may use (Desarrolladores), after the partner's own list.
         */
        readonly acting?: boolean | undefined
      }
    | undefined
  readonly sandbox: boolean
}

const menu = (shell: Shell) => {
  if (shell.signedIn === undefined) return ""
  const items: ReadonlyArray<readonly [Section, string, string]> = shell.signedIn.acting
    ? [
        ["partner", "Comercios", "/dashboard/partner"],
        ...MENU.filter(([section]) => section !== "developers"),
        ...(shell.sandbox ? [["sandbox", "Sandbox", "/dashboard/sandbox"] as const] : [])
      ]
    : shell.signedIn.partner
      ? [["partner", "Comercios", "/dashboard/partner"]]
      : [...MENU, ...(shell.sandbox ? [["sandbox", "Sandbox", "/dashboard/sandbox"] as const] : [])]
  return html`<nav class="menu" aria-label="Secciones">
    <ul>
      ${items.map(
        ([section, label, href]) =>
          html`<li>
            <a href="${href}" ${section === shell.section ? raw(`aria-current="page"`) : ""}>${label}</a>
          </li>`
      )}
    </ul>
  </nav>`
}

/** The whole page: bar (brand, sandbox badge, who, sign-out), menu and `body`. */
export const page = (shell: Shell, status = 200, headers: Record<string, string> = {}) =>
  Layout.respond(
    {
      title: `${shell.title} · cobro`,
      nonce: shell.nonce,
      wide: true,
      head: html`<style nonce="${shell.nonce}">
        ${raw(CSS)}
      </style>`,
      top: html`<header class="bar">
          <div class="bar-inner">
            <p class="brand">cobro · panel</p>
            ${
              shell.sandbox
                ? html`<p class="badge sandbox-badge" role="status">Modo sandbox: sin dinero real</p>`
                : ""
            }
            ${
              shell.signedIn === undefined
                ? ""
                : html`<p class="who">${shell.signedIn.label}</p>
                    <form method="post" action="/dashboard/sign-out">
                      <input type="hidden" name="${Csrf.FIELD}" value="${shell.signedIn.csrf}" />
                      <button type="submit">Cerrar sesión</button>
                    </form>`
            }
          </div>
        </header>
        ${menu(shell)}`,
      body: shell.body
    },
    { status, headers }
  )

/** A page that only says what happened, inside the shell. */
export const message = (
  shell: Omit<Shell, "body">,
  status: number,
  text: string,
  hint?: Html | string
): HttpServerResponse.HttpServerResponse =>
  page(
    {
      ...shell,
      body: html`<section class="card" aria-labelledby="title">
        <h1 id="title">${shell.title}</h1>
        <p>${text}</p>
        ${hint === undefined ? "" : html`<p class="muted">${hint}</p>`}
      </section>`
    },
    status
  )

/** A 303 to `location` (Post/Redirect/Get), never cached. */
export const seeOther = (location: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.empty({ status: 303, headers: { location, "cache-control": "no-store", ...headers } })
