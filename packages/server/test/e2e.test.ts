/**
 * End to end: a real `cobro serve` process (bin/cobro.js, sources bundled at start) on a free port, the
 * CLI run as separate processes against the same `COBRO_DATABASE_URL`, plain `fetch` as the
 * merchant's backend, a loopback node:http server as the merchant's webhook receiver and site, and
 * headless Chromium as the payer and the onboarding merchant. Runs on SQLite and, when the server
 * answers (always in CI), on a fresh Postgres database.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { BankAccount } from "@cobro/core"
import { freshPgUrl, pgAdminUrl, pgAvailable } from "@cobro/storage-contract"
import { Receiver } from "@cobro/webhooks"
import { Effect, Either, Exit, Scope } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { type Browser, chromium } from "playwright-core"
import {
  chromiumArgs,
  type CobroProcess,
  execCobroJson,
  listeningPort,
  START_TIMEOUT,
  spawnCobro,
  stop
} from "./support.js"

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = fs.existsSync(CHROMIUM)

/** Every wait is generous but finite (START_TIMEOUT and the CLI's timeout: ./support.ts). */
const STEP_TIMEOUT = 30_000

const pg = await Effect.runPromise(pgAvailable)
if (!pg) {
  if (process.env["CI"] === "true") throw new Error(`CI: Postgres at ${pgAdminUrl} is not reachable`)
  console.warn(
    `\n!!! Postgres at ${pgAdminUrl} is not reachable: the Postgres end-to-end test is SKIPPED !!!\n`
  )
}

// --- processes ----------------------------------------------------------------------------------

/** A port nobody listens on right now (the server needs it before it starts, for its public URL). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

interface Running extends CobroProcess {
  readonly base: string
  readonly env: Record<string, string>
  readonly dir: string
}

const startServer = async (database: (dir: string) => string): Promise<Running> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-e2e-"))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const env = {
    PORT: String(port),
    COBRO_MODE: "sandbox",
    COBRO_DATABASE_URL: database(dir),
    COBRO_PUBLIC_URL: base,
    COBRO_JOB_INTERVAL: "1 second"
  }
  const running: Running = { ...spawnCobro(["serve"], env, dir), base, env, dir }
  await listeningPort(running, START_TIMEOUT, () => stopServer(running))
  return running
}

/** SIGTERM, then SIGKILL if it has not exited within 20 s; then its directory removed. */
const stopServer = async (running: Running | undefined) => {
  if (running === undefined) return
  await stop(running)
  fs.rmSync(running.dir, { recursive: true, force: true })
}

/** Runs `cobro <args> --json` with the server's environment and parses what it prints. */
const cliJson = (env: Record<string, string>, args: ReadonlyArray<string>) =>
  execCobroJson<Record<string, string>>(args, env)

// --- the merchant's side: webhook receiver and web site ----------------------------------------

interface Delivery {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

interface Site {
  readonly server: http.Server
  readonly url: string
  readonly deliveries: Array<Delivery>
  readonly hits: Array<string>
}

const startSite = async (): Promise<Site> => {
  const deliveries: Array<Delivery> = []
  const hits: Array<string> = []
  const server = http.createServer((request, response) => {
    let body = ""
    request.on("data", (chunk: Buffer) => (body += chunk.toString()))
    request.on("end", () => {
      if (request.method === "POST" && request.url === "/hook") {
        deliveries.push({ headers: request.headers, body })
        response.writeHead(200).end()
        return
      }
      hits.push(request.url ?? "")
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      response.end(`<!doctype html><html lang="es"><title>Sitio</title><h1>Gracias por volver</h1></html>`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
  return { server, url, deliveries, hits }
}

const stopSite = (site: Site | undefined) =>
  new Promise<void>((resolve) => {
    if (site === undefined) return resolve()
    site.server.closeAllConnections()
    site.server.close(() => resolve())
  })

// --- HTTP ---------------------------------------------------------------------------------------

interface Answer {
  readonly status: number
  readonly body: { readonly data: Record<string, unknown> } & Record<string, unknown>
}

const call = async (
  base: string,
  method: string,
  route: string,
  options: { readonly body?: unknown; readonly token?: string } = {}
): Promise<Answer> => {
  const headers: Record<string, string> = {}
  if (options.body !== undefined) headers["content-type"] = "application/json"
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  const response = await fetch(base + route, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(STEP_TIMEOUT)
  })
  const text = await response.text()
  return { status: response.status, body: JSON.parse(text) as Answer["body"] }
}

const until = async <A>(what: string, probe: () => A | undefined, timeout = STEP_TIMEOUT): Promise<A> => {
  const deadline = Date.now() + timeout
  for (;;) {
    const found = probe()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

let merchants = 0
const cuit = BankAccount.makeCuit("30", "71234567")

/** A merchant made with the CLI, with an API token from POST /users/:id/tokens. */
const newMerchant = async (running: Running) => {
  merchants += 1
  const created = await cliJson(running.env, [
    "users",
    "create",
    "--name",
    `Tienda E2E ${merchants}`,
    "--email",
    `e2e${merchants}-${Date.now()}@example.com`,
    "--cuit",
    cuit,
    "--status",
    "ACTIVE"
  ])
  expect(Object.keys(created).sort()).toEqual(["client_id", "client_secret", "user_id"])
  const token = await call(running.base, "POST", `/users/${created["user_id"]}/tokens`, {
    body: { client_id: created["client_id"], client_secret: created["client_secret"] }
  })
  expect(token.status).toBe(200)
  const bearer = String(token.body.data["token"])
  expect(bearer).toMatch(/^USR-/)
  return { user_id: created["user_id"]!, client_secret: created["client_secret"]!, token: bearer }
}

/** POST /payments/ `data`. */
interface PaymentCreated {
  readonly id: string
  readonly payment_status: string
  readonly payment_url: string
  readonly quotes: ReadonlyArray<{ readonly cvu: string; readonly alias: string }>
}

const createPayment = async (
  running: Running,
  merchant: { readonly user_id: string; readonly token: string },
  fields: Record<string, unknown>
) => {
  const created = await call(running.base, "POST", "/payments/", {
    token: merchant.token,
    body: {
      user_id: merchant.user_id,
      price: { amount: 1500, currency: "ARS" },
      payment_options: ["transfer"],
      ...fields
    }
  })
  expect(created.status).toBe(200)
  const payment = created.body.data as unknown as PaymentCreated
  expect(payment.payment_status).toBe("PENDING")
  return payment
}

const faucet = async (running: Running, token: string, cvu: string, amount: number) => {
  const sent = await call(running.base, "POST", `/cvu/${cvu}/faucet`, { token, body: { amount } })
  expect(sent.status).toBe(200)
  expect(sent.body.data).toMatchObject({ cvu, amount, outcome: "credited" })
}

/**
 * The merchant's whole flow over HTTP: credentials from the CLI, a token, a payment with a
 * webhook, a transfer from the faucet, the signed webhook, and the payment read back as paid.
 */
const merchantFlow = async (running: Running, site: Site) => {
  const merchant = await newMerchant(running)
  const payment = await createPayment(running, merchant, {
    external_id: `order-${merchants}`,
    webhook_url: `${site.url}/hook`
  })
  expect(payment.id).toBe(`VAR-${merchant.user_id}-order-${merchants}`)
  expect(payment.payment_url.startsWith(`${running.base}/`)).toBe(true)
  const cvu = payment.quotes[0]!.cvu

  await faucet(running, merchant.token, cvu, 1500)

  const delivery = await until("the Payment updated webhook", () =>
    site.deliveries.find((d) => (JSON.parse(d.body) as { paymentId?: string }).paymentId === payment.id)
  )
  expect(JSON.parse(delivery.body)).toMatchObject({ message: "Payment updated", paymentId: payment.id })
  const verified = Receiver.verifySync({
    secret: merchant.client_secret,
    headers: delivery.headers,
    body: delivery.body,
    now: Date.now()
  })
  expect(Either.isRight(verified)).toBe(true)
  if (Either.isRight(verified)) expect(verified.right.verified).toContain("webhook-signature")
  // Signed with this merchant's secret, not any secret.
  const forged = Receiver.verifySync({
    secret: "cs_someone_else",
    headers: delivery.headers,
    body: delivery.body,
    now: Date.now()
  })
  expect(Either.isLeft(forged)).toBe(true)

  const read = await call(running.base, "GET", `/payments/${payment.id}`, { token: merchant.token })
  expect(read.status).toBe(200)
  expect(read.body.data).toMatchObject({
    id: payment.id,
    payment_status: "SUCCESS",
    quotes: [{ address: cvu }],
    transactions: [{ address: cvu }]
  })
}

// --- SQLite: the API and the pages ---------------------------------------------------------------

describe("e2e: cobro serve on SQLite", () => {
  let running: Running | undefined
  let site: Site | undefined
  let browser: Browser | undefined

  beforeAll(async () => {
    site = await startSite()
    running = await startServer((dir) => `file:${path.join(dir, "cobro.db")}`)
    if (hasChromium) {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        timeout: STEP_TIMEOUT,
        args: chromiumArgs
      })
    }
  }, START_TIMEOUT + 60_000)

  afterAll(async () => {
    await browser?.close()
    await stopServer(running)
    await stopSite(site)
  }, 60_000)

  it("a merchant is paid: CLI credentials, token, payment, faucet, signed webhook, SUCCESS", async () => {
    await merchantFlow(running!, site!)
  }, 240_000)

  it.skipIf(!hasChromium)(
    "the payer opens payment_url, sees the CVU and the amount, and lands on redirect_url once paid",
    async () => {
      const merchant = await newMerchant(running!)
      const target = `${site!.url}/gracias?pedido=${merchants}`
      const payment = await createPayment(running!, merchant, {
        external_id: `page-${merchants}`,
        redirect_url: target
      })
      const quote = payment.quotes[0]!
      const context = await browser!.newContext({ viewport: { width: 360, height: 740 }, locale: "es-AR" })
      try {
        const page = await context.newPage()
        page.setDefaultTimeout(STEP_TIMEOUT)
        const opened = await page.goto(payment.payment_url)
        expect(opened?.status()).toBe(200)
        const text = async (selector: string) =>
          (await page.locator(selector).innerText()).replace(/\u00a0/g, " ")
        expect(await text(".amount")).toBe("$ 1.500,00")
        expect(await text("#cvu")).toBe(quote.cvu)
        expect(await page.locator("#cvu").isVisible()).toBe(true)

        await faucet(running!, merchant.token, quote.cvu, 1500)
        await page.waitForURL(target, { timeout: STEP_TIMEOUT })
        expect(await text("h1")).toBe("Gracias por volver")
        expect(site!.hits).toContain(new URL(target).pathname + new URL(target).search)
      } finally {
        await context.close()
      }
    },
    240_000
  )

  it.skipIf(!hasChromium)(
    "onboarding: a merchant registers and consents, the partner gets code and state and exchanges the code",
    async () => {
      const partner = await cliJson(running!.env, [
        "partners",
        "create",
        "--name",
        "Socio E2E",
        "--redirect-url",
        `${site!.url}/callback`
      ])
      expect(Object.keys(partner).sort()).toEqual([
        "client_id",
        "client_secret",
        "onboarding_url",
        "partner_id"
      ])
      expect(new URL(partner["onboarding_url"]!).pathname).toBe("/authorize")
      expect(new URL(partner["onboarding_url"]!).searchParams.get("partner_id")).toBe(partner["partner_id"])
      const context = await browser!.newContext({ viewport: { width: 360, height: 740 }, locale: "es-AR" })
      try {
        const page = await context.newPage()
        page.setDefaultTimeout(STEP_TIMEOUT)
        const opened = await page.goto(
          `${running!.base}/authorize?partner_id=${encodeURIComponent(partner["partner_id"]!)}&state=xyz`
        )
        expect(opened?.status()).toBe(200)
        const register = page.locator("section", {
          has: page.getByRole("heading", { name: "Crear una cuenta" })
        })
        await register.getByLabel("Nombre o razón social").fill("Librería E2E")
        await register.getByLabel("Email").fill(`onboarding-${Date.now()}@example.com`)
        await register.getByLabel("CUIT").fill(BankAccount.makeCuit("27", "28999222"))
        await register.getByLabel("Contraseña").fill("una clave bastante larga")
        await register.getByLabel("Autorizo a Socio E2E").check()
        await register.getByRole("button", { name: "Crear cuenta y autorizar" }).click()
        await page.waitForURL((url) => url.href.startsWith(`${site!.url}/callback`), {
          timeout: STEP_TIMEOUT
        })

        const back = new URL(page.url())
        expect(back.searchParams.get("state")).toBe("xyz")
        const code = back.searchParams.get("code")
        expect(code).toMatch(/.{16,}/)

        const exchanged = await call(running!.base, "POST", "/auth/tokens", {
          body: { code, client_id: partner["client_id"], client_secret: partner["client_secret"] }
        })
        expect(exchanged.status).toBe(200)
        expect(exchanged.body).toMatchObject({ status: "success", error: false })
        const grant = exchanged.body.data as { access_token: string; token: string; user_id: string }
        expect(grant.access_token).toMatch(/^PAR-/)
        expect(grant.token).toBe(grant.access_token)
        expect(grant.user_id.length).toBeGreaterThan(0)

        // A code is good once.
        const again = await call(running!.base, "POST", "/auth/tokens", {
          body: { code, client_id: partner["client_id"], client_secret: partner["client_secret"] }
        })
        expect(again.status).toBeGreaterThanOrEqual(400)
        expect(again.body).toMatchObject({ status: "error", error: true })
      } finally {
        await context.close()
      }
    },
    240_000
  )
})

// --- Postgres: the API ---------------------------------------------------------------------------

describe.skipIf(!pg)("e2e: cobro serve on Postgres", () => {
  let running: Running | undefined
  let site: Site | undefined
  let scope: Scope.CloseableScope | undefined

  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    const url = await Effect.runPromise(Scope.extend(freshPgUrl, scope))
    site = await startSite()
    running = await startServer(() => url)
  }, START_TIMEOUT + 30_000)

  afterAll(async () => {
    await stopServer(running)
    await stopSite(site)
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  it("a merchant is paid: CLI credentials, token, payment, faucet, signed webhook, SUCCESS", async () => {
    await merchantFlow(running!, site!)
  }, 240_000)
})
