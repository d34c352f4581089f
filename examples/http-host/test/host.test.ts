import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type Host, start } from "../src/host.js"

let host: Host

beforeAll(async () => {
  host = await start(0)
})

afterAll(async () => {
  await host.close()
})

const api = (path: string, init: RequestInit = {}) => fetch(`${host.url}/api/cobro${path}`, init)

const json = (body: unknown, token?: string): RequestInit => ({
  method: "POST",
  headers: {
    "content-type": "application/json",
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
  },
  body: JSON.stringify(body)
})

/** A user token for the demo merchant, asked for over HTTP like any client would. */
const login = async () => {
  const { user_id, client_id, client_secret } = host.merchant
  const response = await api(`/users/${user_id}/tokens`, json({ client_id, client_secret }))
  expect(response.status).toBe(200)
  const body = (await response.json()) as { data: { token: string } }
  return body.data.token
}

describe("a node:http host mounting cobro under /api/cobro", () => {
  it("serves its own routes", async () => {
    const health = await fetch(`${host.url}/health`)
    expect(health.status).toBe(200)
    expect(await health.text()).toBe("ok")

    // Outside the prefix the host answers, not cobro: its own plain-text 404.
    const unknown = await fetch(`${host.url}/payments/`)
    expect(unknown.status).toBe(404)
    expect(await unknown.text()).toBe("not found")
    const lookalike = await fetch(`${host.url}/api/cobrox/payments/`)
    expect(await lookalike.text()).toBe("not found")
  })

  it("creates a payment under the prefix and reads it with the merchant's token", async () => {
    const created = await api(
      "/payments/",
      json({
        user_id: host.merchant.user_id,
        external_id: "order-1",
        price: { amount: 1500.5, currency: "ARS" },
        payment_options: ["transfer"],
        motive: "Pedido 1"
      })
    )
    expect(created.status).toBe(200)
    const { message, data } = (await created.json()) as {
      message: string
      data: {
        id: string
        payment_status: string
        quotes: Array<{ cvu: string; alias: string }>
        payment_url: string
      }
    }
    expect(message).toBe("payment.created")
    expect(data.id).toBe("VAR-demo_merchant-order-1")
    expect(data.payment_status).toBe("PENDING")
    expect(data.quotes).toHaveLength(1)

    // The payer's link is the host's own page under the prefix, and it opens.
    expect(data.payment_url).toBe(`${host.url}/api/cobro/pay/${data.id}`)
    const page = await fetch(data.payment_url)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await page.text()).toContain(data.quotes[0]!.cvu)

    const token = await login()
    const read = await api(`/payments/${data.id}`, { headers: { authorization: `Bearer ${token}` } })
    expect(read.status).toBe(200)
    const detail = (await read.json()) as {
      data: { id: string; external_id: string; motive: string; quotes: Array<{ address: string }> }
    }
    expect(detail.data).toMatchObject({ id: data.id, external_id: "order-1", motive: "Pedido 1" })

    // Without the token the same route is a 401 envelope.
    const anonymous = await api(`/payments/${data.id}`)
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toMatchObject({ message: "auth.token.missing", error: true, code: 401 })
  })

  it("answers an unknown path under the prefix with cobro's 404 envelope", async () => {
    const response = await api("/nowhere")
    expect(response.status).toBe(404)
    expect(response.headers.get("content-type")).toMatch(/^application\/json/)
    expect(await response.json()).toEqual({
      message: "route.not.found",
      error: true,
      code: 404,
      data: { detail: "no route has this path" },
      request_id: response.headers.get("request-id")
    })
    expect(response.headers.get("request-id")).toMatch(/^req_[0-9a-f]{32}$/)
  })

  it("serves the API reference under the prefix", async () => {
    const spec = await api("/openapi.json")
    expect(spec.status).toBe(200)
    const document = (await spec.json()) as { paths: Record<string, unknown> }
    expect(Object.keys(document.paths)).toContain("/payments/")

    // And the host's routes still work after cobro has answered.
    const health = await fetch(`${host.url}/health`)
    expect(await health.text()).toBe("ok")
  })
})
