import { describe, expect, it } from "@effect/vitest"
import { Cobro, CobroError } from "@cobro/client"
import { HttpClientRequest, HttpServer } from "@effect/platform"
import { Effect, HashMap, List, Logger } from "effect"
import { Admin } from "../src/index.js"
import { configOf, request, serverLayer, tempDb } from "./support.js"

const GENERATED = /^req_[0-9a-f]{32}$/

interface Line {
  readonly message: string
  readonly annotations: Record<string, unknown>
}

/** Every log line with its annotations. */
const recordingLogger = (lines: Array<Line>) =>
  Logger.add(
    Logger.make(({ annotations, message }) => {
      lines.push({
        message: List.isList(message) ? String(List.toArray(message)) : String(message),
        annotations: Object.fromEntries(HashMap.toEntries(annotations))
      })
    })
  )

const send = (req: HttpClientRequest.HttpClientRequest, requestId?: string) =>
  request(requestId === undefined ? req : HttpClientRequest.setHeader(req, "x-request-id", requestId))

const payment = (external_id: string) => ({
  user_id: "tienda",
  external_id,
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"]
})

describe("Request-Id", () => {
  it.scopedLive("every answer has one, the error envelope and the request's log lines the same", () =>
    Effect.gen(function* () {
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* tempDb, COBRO_JOB_INTERVAL: "1 hour" })
      const lines: Array<Line> = []
      let clientError: CobroError | undefined
      yield* Effect.gen(function* () {
        const { client_id, client_secret } = yield* Admin.createUser({
          user_id: "tienda",
          name: "Tienda",
          email: "tienda@example.com",
          cuit: "30712345671",
          status: "ACTIVE"
        })

        // A success: a new id, not in a body that has none.
        const created = yield* send(
          HttpClientRequest.post("/payments/").pipe(HttpClientRequest.bodyUnsafeJson(payment("o-1")))
        )
        expect(created.status).toBe(200)
        expect(created.headers["request-id"]).toMatch(GENERATED)
        const id = (created.body["data"] as { id: string }).id

        // Errors: the header, and the same id in the envelope (both shapes).
        const errors = [
          [404, HttpClientRequest.get("/nowhere")],
          [404, HttpClientRequest.get("/payments/VAR-tienda-none/public")],
          [
            400,
            HttpClientRequest.post("/payments/").pipe(HttpClientRequest.bodyUnsafeJson({ user_id: "tienda" }))
          ],
          [405, HttpClientRequest.del("/payments/")],
          [401, HttpClientRequest.get(`/payments/${id}`)],
          [
            401,
            HttpClientRequest.post("/auth/tokens").pipe(
              HttpClientRequest.bodyUnsafeJson({ code: "c", client_id: "x", client_secret: "y" })
            )
          ]
        ] as const
        for (const [status, req] of errors) {
          const answer = yield* send(req)
          expect(answer.status, `${req.method} ${req.url}`).toBe(status)
          expect(answer.headers["request-id"]).toMatch(GENERATED)
          expect(answer.body["request_id"]).toBe(answer.headers["request-id"])
        }
        const partner = yield* send(errors[5][1])
        expect(partner.body).toMatchObject({ status: "error", error: true })
        expect(partner.body["request_id"]).toBe(partner.headers["request-id"])

        // Two answers, two ids.
        const again = yield* send(HttpClientRequest.get("/nowhere"))
        const other = yield* send(HttpClientRequest.get("/nowhere"))
        expect(again.headers["request-id"]).not.toBe(other.headers["request-id"])

        // The hosted page, the docs and the probes too.
        for (const path of [`/pay/${id}`, "/openapi.json", "/healthz"]) {
          const answer = yield* send(HttpClientRequest.get(path))
          expect(answer.status, path).toBe(200)
          expect(answer.headers["request-id"], path).toMatch(GENERATED)
        }

        // A caller's valid X-Request-Id is kept, on a success and in an error envelope.
        const own = "support-case:42/retry=1"
        const kept = yield* send(HttpClientRequest.get(`/payments/${id}/public`), own)
        expect(kept.status).toBe(200)
        expect(kept.headers["request-id"]).toBe(own)
        const keptError = yield* send(HttpClientRequest.get("/payments/VAR-tienda-none/public"), "err-42")
        expect(keptError.headers["request-id"]).toBe("err-42")
        expect(keptError.body["request_id"]).toBe("err-42")
        const longest = "x".repeat(128)
        expect((yield* send(HttpClientRequest.get("/healthz"), longest)).headers["request-id"]).toBe(longest)

        // An invalid one (a space, a non-ASCII character, too long) is replaced by a new id.
        for (const invalid of ["two words", "pedido-ñ", "x".repeat(129)]) {
          const replaced = yield* send(HttpClientRequest.get("/nowhere"), invalid)
          expect(replaced.headers["request-id"], invalid).toMatch(GENERATED)
          expect(replaced.body["request_id"]).toBe(replaced.headers["request-id"])
        }

        // Every log line of a request carries its id: the request line of the one above.
        yield* send(
          HttpClientRequest.post("/payments/").pipe(HttpClientRequest.bodyUnsafeJson(payment("o-2"))),
          "trace-me-7"
        )

        // The client's error carries the id: the same the server logged that request with.
        const server = yield* HttpServer.HttpServer
        if (server.address._tag !== "TcpAddress") throw new Error("not on TCP")
        const cobro = new Cobro({
          baseUrl: `http://127.0.0.1:${server.address.port}`,
          credentials: { userId: "tienda", clientId: client_id, clientSecret: client_secret }
        })
        const failed = yield* Effect.promise(() =>
          cobro.getPayment("VAR-tienda-none").then(
            () => undefined,
            (e: unknown) => e
          )
        )
        expect(failed).toBeInstanceOf(CobroError)
        clientError = failed as CobroError
      }).pipe(Effect.provide(serverLayer(config)), Effect.provide(recordingLogger(lines)), Effect.scoped)

      expect(clientError?.status).toBe(404)
      expect(clientError?.requestId).toMatch(GENERATED)
      expect(String(clientError)).toContain(`request ${clientError?.requestId}`)
      expect(
        lines.find(
          (line) => line.message === "request" && line.annotations["request_id"] === clientError?.requestId
        )?.annotations
      ).toMatchObject({ "http.route": "/payments/:paymentId", "http.status": 404 })

      const ofRequest = lines.filter((line) => line.annotations["request_id"] === "trace-me-7")
      expect(ofRequest.map((line) => line.message)).toContain("request")
      expect(ofRequest.find((line) => line.message === "request")?.annotations).toMatchObject({
        "http.route": "/payments/",
        "http.status": 200
      })
      const errorLine = lines.find(
        (line) => line.message === "request" && line.annotations["http.status"] === 405
      )
      expect(errorLine?.annotations["request_id"]).toMatch(GENERATED)
    })
  )
})
