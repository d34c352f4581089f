/**
 * The API reference over a real HTTP server: `GET /` redirects to `/docs`; `/docs` and
 * `/openapi.json` are answered br or gzip as `Accept-Encoding` asks (the same bytes once
 * compressed), plain without it, always with `Vary: Accept-Encoding`.
 */
import { HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as http from "node:http"
import * as zlib from "node:zlib"
import * as Reference from "../src/Reference.js"
import { configOf, serverLayer, tempDb } from "./support.js"

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
}

/** A GET with node:http: no redirect followed, nothing decompressed. */
const rawGet = (port: number, path: string, headers: Record<string, string> = {}) =>
  Effect.promise(
    () =>
      new Promise<Answer>((resolve, reject) => {
        const req = http.get({ host: "127.0.0.1", port, path, headers }, (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (chunk: Buffer) => chunks.push(chunk))
          res.on("end", () =>
            resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) })
          )
        })
        req.on("error", reject)
      })
  )

const decoded = (answer: Answer): Buffer =>
  answer.headers["content-encoding"] === "br"
    ? zlib.brotliDecompressSync(answer.body)
    : answer.headers["content-encoding"] === "gzip"
      ? zlib.gunzipSync(answer.body)
      : answer.body

describe("Accept-Encoding", () => {
  it("prefers br, then gzip, honouring q=0 and *", () => {
    expect(Reference.negotiate(undefined)).toEqual(Option.none())
    expect(Reference.negotiate("gzip, deflate, br")).toEqual(Option.some("br"))
    expect(Reference.negotiate("gzip")).toEqual(Option.some("gzip"))
    expect(Reference.negotiate("br;q=0, gzip")).toEqual(Option.some("gzip"))
    expect(Reference.negotiate("gzip;q=1.0, br;q=0.5")).toEqual(Option.some("gzip"))
    expect(Reference.negotiate("*")).toEqual(Option.some("br"))
    expect(Reference.negotiate("*;q=0, gzip")).toEqual(Option.some("gzip"))
    expect(Reference.negotiate("identity")).toEqual(Option.none())
    expect(Reference.negotiate("deflate")).toEqual(Option.none())
  })
})

describe("the API reference over HTTP", () => {
  it.scopedLive("GET / redirects to /docs; /docs and /openapi.json go out compressed", () =>
    Effect.gen(function* () {
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
      yield* Effect.gen(function* () {
        const server = yield* HttpServer.HttpServer
        const port = (server.address as HttpServer.TcpAddress).port

        const home = yield* rawGet(port, "/")
        expect(home.status).toBe(302)
        expect(home.headers["location"]).toBe("/docs")
        expect(home.headers["request-id"]).toBeDefined()

        for (const path of ["/docs", "/openapi.json"]) {
          const plain = yield* rawGet(port, path)
          expect(plain.status, path).toBe(200)
          expect(plain.headers["content-encoding"], path).toBeUndefined()
          expect(plain.headers["vary"], path).toMatch(/accept-encoding/i)
          for (const [accept, encoding] of [
            ["gzip, deflate, br", "br"],
            ["gzip", "gzip"],
            ["br;q=0, gzip", "gzip"]
          ] as const) {
            const first = yield* rawGet(port, path, { "accept-encoding": accept })
            expect(first.status, `${path} ${accept}`).toBe(200)
            expect(first.headers["content-encoding"], `${path} ${accept}`).toBe(encoding)
            expect(first.headers["vary"], path).toMatch(/accept-encoding/i)
            expect(first.headers["content-type"], path).toBe(plain.headers["content-type"])
            expect(Number(first.headers["content-length"])).toBe(first.body.byteLength)
            expect(decoded(first).equals(plain.body), `${path} ${accept}`).toBe(true)
            // At most a third of the plain bytes (the page is 3.5 MB).
            expect(first.body.byteLength, `${path} ${accept}`).toBeLessThan(plain.body.byteLength / 3)
            // Compressed once: the next answer is the same bytes, with a request id of its own.
            const again = yield* rawGet(port, path, { "accept-encoding": accept })
            expect(again.body.equals(first.body), path).toBe(true)
            expect(again.headers["request-id"]).not.toBe(first.headers["request-id"])
          }
        }
        const json = yield* rawGet(port, "/openapi.json", { "accept-encoding": "gzip" })
        expect(JSON.parse(decoded(json).toString("utf8"))).toMatchObject({ openapi: expect.any(String) })
        // Other routes are not touched.
        const health = yield* rawGet(port, "/healthz", { "accept-encoding": "br" })
        expect(health.headers["content-encoding"]).toBeUndefined()
        expect(health.headers["vary"] ?? "").not.toMatch(/accept-encoding/i)
      }).pipe(Effect.provide(serverLayer(config)))
    })
  )
})
