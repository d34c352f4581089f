/**
 * The shell every hosted page shares: Spanish (`es-AR`), a viewport for phones, one inline
 * stylesheet (no CDN: the pages must work with no other origin reachable), and the security
 * headers. Inline `<style>` and `<script>` carry a per-response nonce, and the
 * Content-Security-Policy allows nothing else: an injected tag would not run even if escaping
 * ever failed.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { html, type Html, raw } from "./html.js"

const CSS = `
:root{color-scheme:light;--fg:#1b1b1f;--muted:#4a4a55;--bg:#f3f4f6;--card:#fff;--line:#d3d5db;
--brand:#0b57d0;--brand-dark:#0842a0;--ok:#0f5223;--ok-bg:#e3f4e8;--warn:#6b4300;--warn-bg:#fff3d1;
--err:#a4161a;--err-bg:#fdeaea;--info:#0b3d91;--info-bg:#e8f0fe}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--fg);background:var(--bg)}
.site{background:var(--card);border-bottom:1px solid var(--line)}
.site p{max-width:34rem;margin:0 auto;padding:.75rem 1rem;font-weight:700;letter-spacing:.02em}
.wide .site p{max-width:60rem}
main{max-width:34rem;margin:0 auto;padding:1rem}
.wide main{max-width:60rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1.25rem;margin:0 0 1rem}
h1{font-size:1.375rem;line-height:1.3;margin:0 0 .5rem;overflow-wrap:anywhere}
h2{font-size:1.125rem;line-height:1.3;margin:0 0 .75rem}
p{margin:0 0 .75rem}
.muted{color:var(--muted)}
.eyebrow{font-size:.875rem;color:var(--muted);margin:0}
.badge{display:inline-block;font-size:.875rem;font-weight:700;letter-spacing:.02em;color:var(--warn);
background:var(--warn-bg);border:1px solid var(--warn);border-radius:999px;padding:.125rem .75rem;margin:0 0 .75rem}
.motive{overflow-wrap:anywhere}
.amount{font-size:2.25rem;line-height:1.2;font-weight:700;margin:.25rem 0 .5rem;font-variant-numeric:tabular-nums;
overflow-wrap:anywhere}
.state{border-radius:8px;padding:.75rem 1rem;margin:1rem 0;background:var(--info-bg);color:var(--info)}
.state strong{display:block;font-size:1.0625rem}
.state p{margin:.25rem 0 0}
.state.ok{background:var(--ok-bg);color:var(--ok)}
.state.warn{background:var(--warn-bg);color:var(--warn)}
.state.err{background:var(--err-bg);color:var(--err)}
.countdown{font-variant-numeric:tabular-nums;font-weight:700}
dl{margin:0}
.field{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.75rem 0;border-top:1px solid var(--line)}
.field dt{flex:1 0 100%;font-size:.875rem;color:var(--muted)}
.field dd{margin:0;flex:1 1 12rem;min-width:0;font:600 1.125rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
overflow-wrap:anywhere}
button,.button{display:inline-flex;align-items:center;justify-content:center;font:inherit;font-weight:600;
min-height:44px;padding:.5rem 1rem;border-radius:8px;border:2px solid var(--brand);background:var(--card);
color:var(--brand);cursor:pointer;text-decoration:none}
button:hover,.button:hover{background:var(--info-bg)}
.primary{background:var(--brand);color:#fff;width:100%}
.primary:hover{background:var(--brand-dark)}
button[disabled]{opacity:.7;cursor:progress}
:focus-visible{outline:3px solid #1a73e8;outline-offset:2px}
ol{padding-left:1.25rem;margin:.75rem 0 0}
li{margin:.25rem 0}
label{display:block;font-weight:600;margin:.875rem 0 .25rem}
input[type=text],input[type=email],input[type=password]{display:block;width:100%;font:inherit;min-height:44px;
padding:.5rem .75rem;border:1px solid #6e6e7a;border-radius:8px;background:#fff;color:var(--fg)}
input[aria-invalid=true]{border:2px solid var(--err)}
.hint{font-size:.875rem;color:var(--muted);margin:.25rem 0 0}
.error{color:var(--err);font-size:.9375rem;font-weight:600;margin:.25rem 0 0}
.consent{display:flex;gap:.625rem;align-items:flex-start;margin:1.25rem 0 1rem}
.consent input{width:1.375rem;height:1.375rem;margin:.125rem 0 0;flex:none}
.consent label{font-weight:400;margin:0}
.grid{display:grid;gap:0 1rem}
@media (min-width:48rem){.grid{grid-template-columns:1fr 1fr;align-items:start}}
.visually-hidden{position:absolute!important;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;
clip:rect(0 0 0 0);white-space:nowrap;border:0}
[hidden]{display:none!important}
footer{font-size:.875rem;color:var(--muted);text-align:center;padding:0 1rem 1.5rem}
`

export interface Page {
  readonly title: string
  readonly body: Html
  readonly nonce: string
  /** Two columns on wide screens (the onboarding forms). */
  readonly wide?: boolean
  /** Extra `<head>` markup (e.g. a `<meta http-equiv="refresh">` for browsers without JavaScript). */
  readonly head?: Html
  /** What replaces the site's header before `<main>` (the dashboard's bar and menu). */
  readonly top?: Html
  /** A trusted constant script, run with the page's nonce. */
  readonly script?: string
}

export const document = (page: Page): string =>
  html`<!doctype html>
    <html lang="es-AR" ${page.wide ? raw(` class="wide"`) : ""}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>${page.title}</title>
        <link rel="icon" href="data:," />
        <style nonce="${page.nonce}">
          ${raw(CSS)}
        </style>
        ${page.head}
      </head>
      <body>
        ${page.top ?? html`<header class="site"><p>cobro</p></header>`}
        <main>${page.body}</main>
        <footer>Pagos por transferencia con cobro</footer>
        ${
          page.script === undefined
            ? ""
            : html`<script nonce="${page.nonce}">
                ${raw(page.script)}
              </script>`
        }
      </body>
    </html> `.value

export interface SecurityOptions {
  readonly nonce: string
  /** Origins a form may submit to or be redirected to after submitting (CSP `form-action`). */
  readonly formTargets?: ReadonlyArray<string>
}

/** The headers of every page: CSP with the nonce, no framing, no referrer, no caching. */
export const securityHeaders = (options: SecurityOptions): Record<string, string> => ({
  "content-security-policy": [
    "default-src 'none'",
    `script-src 'nonce-${options.nonce}'`,
    `style-src 'nonce-${options.nonce}'`,
    "connect-src 'self'",
    "img-src data:",
    `form-action ${["'self'", ...(options.formTargets ?? [])].join(" ")}`,
    "base-uri 'none'",
    "frame-ancestors 'none'"
  ].join("; "),
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store"
})

export const respond = (
  page: Page,
  options: {
    readonly status: number
    readonly formTargets?: ReadonlyArray<string>
    readonly headers?: Record<string, string>
  }
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(document(page), {
    status: options.status,
    contentType: "text/html; charset=utf-8",
    headers: {
      ...securityHeaders({ nonce: page.nonce, formTargets: options.formTargets ?? [] }),
      ...options.headers
    }
  })

/** A page that only explains what went wrong and what to do. */
export const messagePage = (options: {
  readonly nonce: string
  readonly status: number
  readonly title: string
  readonly message: string
  readonly hint?: string
  readonly headers?: Record<string, string>
}): HttpServerResponse.HttpServerResponse =>
  respond(
    {
      title: `${options.title} · cobro`,
      nonce: options.nonce,
      body: html`<section class="card" aria-labelledby="title">
        <h1 id="title">${options.title}</h1>
        <p>${options.message}</p>
        ${options.hint === undefined ? "" : html`<p class="muted">${options.hint}</p>`}
      </section>`
    },
    { status: options.status, ...(options.headers === undefined ? {} : { headers: options.headers }) }
  )
