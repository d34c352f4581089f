/**
 * The hosted payment page's script (`payment.ts` serves it). A constant: everything it needs
 * comes from `data-*` attributes, which the template escapes, so no request data is ever written
 * into script text.
 */
export const SCRIPT = `(() => {
  "use strict"
  const root = document.getElementById("cobro-pay")
  if (!root) return
  const d = root.dataset
  const state = document.getElementById("payment-state")
  const say = (title, text, tone) => {
    state.className = "state " + tone
    state.replaceChildren()
    const strong = document.createElement("strong")
    strong.textContent = title
    state.append(strong)
    if (text) {
      const p = document.createElement("p")
      p.textContent = text
      state.append(p)
    }
  }

  // The sandbox form: one simulated transfer per click.
  const simulate = document.querySelector("#simulate form")
  if (simulate) simulate.addEventListener("submit", () => {
    const submit = document.getElementById("simulate-submit")
    if (submit) setTimeout(() => { submit.disabled = true }, 0)
  })

  // Copy buttons: the Clipboard API, or a hidden textarea where it is unavailable.
  const copyStatus = document.getElementById("copy-status")
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const label = button.textContent
    button.addEventListener("click", async () => {
      const text = button.dataset.copy
      let ok = false
      try {
        await navigator.clipboard.writeText(text)
        ok = true
      } catch {
        const area = document.createElement("textarea")
        area.value = text
        area.setAttribute("readonly", "")
        area.className = "visually-hidden"
        document.body.append(area)
        area.select()
        try { ok = document.execCommand("copy") } catch { ok = false }
        area.remove()
      }
      if (copyStatus) copyStatus.textContent = ok ? button.dataset.copied : "No pudimos copiar: seleccioná el texto y copialo."
      if (ok) {
        button.textContent = "¡Copiado!"
        setTimeout(() => { button.textContent = label }, 2000)
      }
    })
  }

  const redirectTo = (delay) => {
    if (!d.redirect) return
    setTimeout(() => { location.assign(d.redirect) }, delay)
  }
  const redirectDelay = Number(d.redirectDelay)
  if (redirectDelay > 0) redirectTo(redirectDelay)

  let stopped = Number(d.pollMs) <= 0
  let timer

  // Countdown against the server's clock: the time left at rendering, minus the time elapsed here.
  const countdown = document.getElementById("countdown")
  const started = performance.now()
  const left0 = Number(d.expiresIn)
  const two = (n) => String(n).padStart(2, "0")
  const format = (ms) => {
    const total = Math.max(0, Math.floor(ms / 1000))
    const days = Math.floor(total / 86400)
    const hours = Math.floor((total % 86400) / 3600)
    const minutes = Math.floor((total % 3600) / 60)
    return days > 0 ? days + " d " + hours + " h " + minutes + " min" : two(hours) + ":" + two(minutes) + ":" + two(total % 60)
  }
  const expire = () => {
    stopped = true
    clearTimeout(timer)
    say(d.expiredMessage, "", "err")
    const transfer = document.getElementById("transfer")
    if (transfer) transfer.hidden = true
    const expiry = document.getElementById("expiry")
    if (expiry) expiry.hidden = true
  }
  const tick = () => {
    const left = left0 - (performance.now() - started)
    if (left <= 0) return expire()
    countdown.textContent = format(left)
    setTimeout(tick, (left % 1000) + 20)
  }
  if (countdown) tick()

  // Live state: poll the public endpoint; a change of state, amount or expiry re-renders the page.
  const schedule = (wait) => {
    clearTimeout(timer)
    if (!stopped) timer = setTimeout(poll, wait)
  }
  const poll = async () => {
    if (stopped) return
    let wait = Number(d.pollMs)
    if (document.visibilityState !== "hidden") {
      try {
        const response = await fetch(d.publicUrl, { headers: { accept: "application/json" }, cache: "no-store", credentials: "omit" })
        if (response.status === 429) wait = Math.max(wait, 1000 * Number(response.headers.get("retry-after") || 10))
        if (response.ok) {
          const p = (await response.json()).data
          const amount = p.quotes && p.quotes[0] ? p.quotes[0].amount : d.amount
          if (p.payment_status === "SUCCESS" && d.redirect) {
            stopped = true
            say(d.paidMessage, "", "ok")
            return redirectTo(1500)
          }
          if (p.payment_status !== d.status || amount !== d.amount || p.expiration_timestamp !== d.expires) {
            stopped = true
            return location.reload()
          }
        }
      } catch {
        // Offline for a moment: try again at the next tick.
      }
    }
    schedule(wait)
  }
  // Hidden tabs skip their polls; coming back asks at once.
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") schedule(0) })
  schedule(Number(d.pollMs))
})()
`
