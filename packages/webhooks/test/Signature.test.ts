/**
 * Our signatures verify with the reference Standard Webhooks library and with our receiver
 * helper; the helper refuses what it must.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import { createHmac } from "node:crypto"
import { Webhook, WebhookVerificationError } from "standardwebhooks"
import { Receiver, Signature } from "../src/index.js"

const secret = "cs_3q2-7wEvVbCRNKVCzJAlhJ-oGDuHrWkV1xOMkxvbo5U"
const body = '{"message":"Payment updated","paymentId":"VAR-u1-o-1","externalId":"o-1"}'
const eventId = "evt_0mhbq4x2c7kq2w3e9d8f1a0b"
const now = 1_790_000_000_000
const timestamp = now / 1000

const signed = (overrides: { secret?: string; timestamp?: number; body?: string } = {}) =>
  Signature.headers({
    secret: overrides.secret ?? secret,
    eventId,
    timestamp: overrides.timestamp ?? timestamp,
    body: overrides.body ?? body
  })

const reasonOf = (result: Either.Either<unknown, Receiver.WebhookVerificationError>) =>
  Either.isLeft(result) ? result.left.reason : "verified"

describe("signatures", () => {
  it("X-Service-Signature is sha256=<hex HMAC-SHA256(client_secret, raw body)>", () => {
    const expected = createHmac("sha256", secret).update(body).digest("hex")
    expect(signed()["x-service-signature"]).toBe(`sha256=${expected}`)
    expect(signed()["webhook-id"]).toBe(eventId)
    expect(signed()["webhook-timestamp"]).toBe(String(timestamp))
  })

  it("the standardwebhooks package verifies our headers with whsec_ + base64(client_secret), or the raw secret", () => {
    // The library checks the timestamp against the real clock: sign with the current time.
    const realNow = Math.floor(Date.now() / 1000)
    const headers = signed({ timestamp: realNow })
    expect(new Webhook(Signature.standardWebhooksSecret(secret)).verify(body, headers)).toEqual(
      JSON.parse(body)
    )
    expect(new Webhook(secret, { format: "raw" }).verify(body, headers)).toEqual(JSON.parse(body))
    // And its own signature is byte for byte ours.
    expect(new Webhook(secret, { format: "raw" }).sign(eventId, new Date(realNow * 1000), body)).toBe(
      headers["webhook-signature"]
    )
    // A wrong secret or a changed body does not verify.
    expect(() => new Webhook(Signature.standardWebhooksSecret("cs_other")).verify(body, headers)).toThrow(
      WebhookVerificationError
    )
    expect(() => new Webhook(Signature.standardWebhooksSecret(secret)).verify(body + " ", headers)).toThrow(
      WebhookVerificationError
    )
  })

  it("our helper verifies both header styles, within the tolerance, for string and byte bodies", () => {
    const headers = signed()
    const ok = Receiver.verifySync({ secret, headers, body, now })
    expect(ok).toEqual(
      Either.right({ id: eventId, timestamp, verified: ["webhook-signature", "x-service-signature"] })
    )
    expect(Either.isRight(Receiver.verifySync({ secret, headers, body: Buffer.from(body), now }))).toBe(true)
    // fetch-style Headers and upper-case names.
    expect(Either.isRight(Receiver.verifySync({ secret, headers: new Headers(headers), body, now }))).toBe(
      true
    )
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]))
    expect(Either.isRight(Receiver.verifySync({ secret, headers: upper, body, now }))).toBe(true)
    // Within 5 minutes either way, not beyond.
    expect(reasonOf(Receiver.verifySync({ secret, headers, body, now: now + 300_000 }))).toBe("verified")
    expect(reasonOf(Receiver.verifySync({ secret, headers, body, now: now - 300_000 }))).toBe("verified")
    expect(reasonOf(Receiver.verifySync({ secret, headers, body, now: now + 301_000 }))).toBe(
      "timestamp_out_of_tolerance"
    )
    expect(reasonOf(Receiver.verifySync({ secret, headers, body, now: now - 301_000 }))).toBe(
      "timestamp_out_of_tolerance"
    )
    expect(
      reasonOf(Receiver.verifySync({ secret, headers, body, now: now + 3_600_000, toleranceSeconds: 3600 }))
    ).toBe("verified")
  })

  it("our helper refuses a changed body, another secret, a replayed timestamp and missing or malformed headers", () => {
    const headers = signed()
    const check = (input: Partial<Receiver.VerifyInput>) =>
      reasonOf(Receiver.verifySync({ secret, headers, body, now, ...input }))
    expect(check({ body: body.replace("o-1", "o-2") })).toBe("signature_mismatch")
    expect(check({ secret: "cs_other" })).toBe("signature_mismatch")
    // A signature of the body at another time does not pass as this time's.
    expect(check({ headers: { ...headers, "webhook-timestamp": String(timestamp + 1) } })).toBe(
      "signature_mismatch"
    )
    // Each signature header present must match.
    expect(check({ headers: { ...headers, "x-service-signature": "sha256=00" } })).toBe("signature_mismatch")
    expect(check({ headers: { ...headers, "webhook-signature": "v1,AAAA" } })).toBe("signature_mismatch")
    expect(
      check({
        headers: { ...headers, "webhook-signature": headers["webhook-signature"]!.replace("v1,", "v2,") }
      })
    ).toBe("signature_mismatch")
    expect(check({ headers: {} })).toBe("missing_signature")
    expect(check({ headers: { ...headers, "webhook-timestamp": "yesterday" } })).toBe("malformed_headers")
    const { "webhook-id": _id, ...noId } = headers
    expect(check({ headers: noId })).toBe("malformed_headers")
    const { "webhook-timestamp": _ts, ...noTimestamp } = headers
    expect(check({ headers: noTimestamp })).toBe("malformed_headers")
    expect(check({ secret: "" })).toBe("malformed_headers")
  })

  it("several v1 signatures (a rotated secret) pass when one matches; X-Service-Signature alone needs requireTimestamp: false", () => {
    const headers = signed()
    const rotated = {
      ...headers,
      "webhook-signature": `${signed({ secret: "cs_old" })["webhook-signature"]} ${headers["webhook-signature"]}`
    }
    expect(reasonOf(Receiver.verifySync({ secret, headers: rotated, body, now }))).toBe("verified")
    const legacy = { "x-service-signature": headers["x-service-signature"]! }
    expect(reasonOf(Receiver.verifySync({ secret, headers: legacy, body, now }))).toBe("malformed_headers")
    expect(Receiver.verifySync({ secret, headers: legacy, body, now, requireTimestamp: false })).toEqual(
      Either.right({ id: null, timestamp: null, verified: ["x-service-signature"] })
    )
  })

  it.effect("verify reads the time from Clock", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(now)
      const verified = yield* Receiver.verify({ secret, headers: signed(), body })
      expect(verified.id).toBe(eventId)
      yield* TestClock.adjust("6 minutes")
      const late = yield* Effect.flip(Receiver.verify({ secret, headers: signed(), body }))
      expect(late).toMatchObject({ _tag: "WebhookVerificationError", reason: "timestamp_out_of_tolerance" })
    })
  )
})
