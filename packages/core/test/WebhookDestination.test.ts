/**
 * The webhook URL policy on its own: what each mode refuses, judged on the host WHATWG `URL`
 * normalizes (every notation of an address), and how `check` words the 400.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { WebhookDestination } from "../src/index.js"

const refusalOf = (mode: WebhookDestination.Mode, url: string) =>
  Option.getOrNull(WebhookDestination.refusal(mode, url))

describe("WebhookDestination.refusal", () => {
  it("production: every notation of a non-public address is judged as the address it names", () => {
    const loopback = [
      "https://127.0.0.1/x",
      "https://2130706433/x", // one decimal number
      "https://0x7f.1/x", // hex, short form
      "https://0x7F000001/x",
      "https://0177.0.0.1/x", // octal
      "https://127.1/x", // short form
      "https://127.0.0.1./x", // trailing dot
      "https://127.0.0.%31/x", // percent-encoded
      "https://１２７.０.０.１/x" // full-width digits
    ]
    for (const url of loopback) {
      expect({ url, refusal: refusalOf("production", url) }).toEqual({
        url,
        refusal: { kind: "forbidden", detail: "127.0.0.1 is a loopback address" }
      })
    }
    expect(refusalOf("production", "https://[::ffff:127.0.0.1]/x")?.detail).toBe(
      "::ffff:7f00:1 is a loopback address"
    )
    expect(refusalOf("production", "https://[0:0:0:0:0:ffff:a9fe:a9fe]/x")?.detail).toBe(
      "::ffff:a9fe:a9fe is a link-local address"
    )
    expect(refusalOf("production", "https://0/x")?.detail).toBe("0.0.0.0 is an unspecified address")
    expect(refusalOf("production", "https://LOCALHOST./x")?.detail).toBe("localhost is a loopback name")
    expect(refusalOf("production", "https://a.b.localhost/x")?.detail).toBe(
      "a.b.localhost is a loopback name"
    )
  })

  it("production: https only; a public name or address passes, ports are free", () => {
    expect(refusalOf("production", "http://hooks.example.com/x")).toEqual({
      kind: "forbidden",
      detail: "production webhooks must use https"
    })
    for (const url of [
      "https://hooks.example.com/x",
      "https://hooks.example.com:8443/x",
      "https://localhost.example.com/x", // a name that only starts like one
      "https://8.8.8.8/x",
      "https://[2001:4860:4860::8888]/x"
    ]) {
      expect({ url, refusal: refusalOf("production", url) }).toEqual({ url, refusal: null })
    }
  })

  it("sandbox: any http(s) host; both modes refuse what the transport never sends", () => {
    for (const url of ["http://127.0.0.1:9/x", "http://localhost/x", "http://[::1]/x", "http://10.0.0.1/x"]) {
      expect({ url, refusal: refusalOf("sandbox", url) }).toEqual({ url, refusal: null })
    }
    for (const mode of ["sandbox", "production"] as const) {
      expect(refusalOf(mode, "https://user:pw@hooks.example.com/x")).toEqual({
        kind: "invalid",
        detail: "credentials in the URL are not allowed"
      })
      expect(refusalOf(mode, "ftp://hooks.example.com/x")).toEqual({
        kind: "invalid",
        detail: "scheme ftp: is not http(s)"
      })
      expect(refusalOf(mode, "/relative")).toEqual({ kind: "invalid", detail: "not an absolute URL" })
    }
  })
})

describe("WebhookDestination.check", () => {
  it.effect("fails with request.invalid naming the field; absent and null pass", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        WebhookDestination.check("production", "webhook_url", "https://10.0.0.1/x")
      )
      expect(error).toMatchObject({ _tag: "InvalidInput", key: "request.invalid", field: "webhook_url" })
      expect(error.message).toBe(
        "is not accepted in production mode: 10.0.0.1 is a private address; give an https URL of a public host"
      )
      yield* WebhookDestination.check("production", "webhook_url", null)
      yield* WebhookDestination.check("production", "webhook_url", undefined)
      yield* WebhookDestination.check("sandbox", "webhook_url", "http://10.0.0.1/x")
    })
  )
})
