/**
 * A 5xx the server answers on purpose is not a fault: SPEC's 503 for the deprecated crypto and
 * PIX methods is logged at WARN with its key and no cause (no stack trace in the operator's log),
 * while a defect is still an ERROR with its cause.
 */
import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { Engine } from "@cobro/core"
import { PaymentRepository } from "@cobro/core/ports"
import { Cause, Effect, Layer, Logger, LogLevel } from "effect"
import { CobroHttp } from "../src/index.js"
import { SandboxEngine } from "@cobro/bank-sandbox"
import { call, merchant } from "./support.js"

interface Entry {
  readonly level: string
  readonly message: string
  readonly cause: string
  readonly annotations: Record<string, unknown>
}

const logged: Array<Entry> = []
const collect = Logger.make(({ annotations, cause, logLevel, message }) => {
  logged.push({
    level: logLevel.label,
    message: (Array.isArray(message) ? message : [message]).map(String).join(" "),
    cause: Cause.isEmpty(cause) ? "" : Cause.pretty(cause),
    annotations: Object.fromEntries(annotations)
  })
})

/** The memory engine whose payments port dies on storing order `boom`: a fault of ours (500). */
const dyingOnBoom = Layer.effect(
  PaymentRepository.PaymentRepository,
  Effect.map(PaymentRepository.PaymentRepository, (repo) =>
    PaymentRepository.PaymentRepository.of({
      ...repo,
      insert: (payment) =>
        payment.external_id === "boom" ? Effect.dieMessage("the disk is on fire") : repo.insert(payment)
    })
  )
)

const server = HttpApiBuilder.serve().pipe(
  Layer.provide(CobroHttp.layer()),
  Layer.provideMerge(
    SandboxEngine.layerSandbox(dyingOnBoom.pipe(Layer.provideMerge(Engine.layerMemoryStorage)))
  ),
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provide(Logger.replace(Logger.defaultLogger, collect)),
  Layer.provide(Logger.minimumLogLevel(LogLevel.All))
)

layer(server)((it) => {
  describe("the deprecated crypto and PIX methods", () => {
    it.effect("answer 503 and are logged at WARN without a stack trace", () =>
      Effect.gen(function* () {
        yield* merchant("m1")
        for (const option of ["crypto", "pix", "PIX"]) {
          logged.length = 0
          const response = yield* call("POST", "/payments/", {
            body: { user_id: "m1", price: { amount: 1500, currency: "ARS" }, payment_options: [option] }
          })
          expect(response.status, option).toBe(503)
          expect((response.body as { message?: string }).message).toBe("payment.method.deprecated")
          const about = logged.filter((e) => e.level === "ERROR" || e.level === "WARN" || e.level === "FATAL")
          expect(about, option).toHaveLength(1)
          expect(about[0]).toMatchObject({ level: "WARN", cause: "" })
          expect(about[0]!.annotations).toMatchObject({ status: 503, key: "payment.method.deprecated" })
          expect(JSON.stringify(about[0])).not.toMatch(/\n\s+at /)
        }
      })
    )
  })

  describe("a fault", () => {
    it.effect("answers 500 and is still logged at ERROR with its cause", () =>
      Effect.gen(function* () {
        yield* merchant("m2")
        logged.length = 0
        const response = yield* call("POST", "/payments/", {
          body: {
            user_id: "m2",
            external_id: "boom",
            price: { amount: 1500, currency: "ARS" },
            payment_options: ["transfer"]
          }
        })
        expect(response.status).toBe(500)
        const errors = logged.filter((e) => e.level === "ERROR")
        expect(errors).toHaveLength(1)
        expect(errors[0]!.cause).toContain("the disk is on fire")
      })
    )
  })
})
