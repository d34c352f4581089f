/**
 * What a newcomer meets first. The README's first steps are what `npm start` prints: its step 1
 * shows the start banner's demo merchant lines as the server prints them, and step 2 gets the
 * token with the banner's own `token:` command (the credentials as placeholders). And the
 * payment example of the API reference (`/docs`' "Try it") creates a payment for the sandbox's
 * demo merchant on a server as `npm start` runs it, on SQLite and on Postgres.
 */
import { describe, expect, it } from "@effect/vitest"
import { freshPgUrl, pgAvailable } from "@cobro/storage-contract"
import { Effect, type Scope } from "effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Admin, Server } from "../src/index.js"
import { configOf, get, postJson, serverLayer, tempDb } from "./support.js"

/** Postgres runs where it answers (the CLI and offset tests say loudly when it does not). */
const pg = await Effect.runPromise(pgAvailable)

const readme = fs.readFileSync(fileURLToPath(new URL("../../../README.md", import.meta.url)), "utf8")

const placeholders = { user_id: "demo", client_id: "<client_id>", client_secret: "<client_secret>" }

/** The banner of a first start on the default port, with the demo's credentials as placeholders. */
const firstStart = Effect.map(configOf({}), (config) =>
  Server.banner(
    config,
    { _tag: "TcpAddress", hostname: "0.0.0.0", port: 3000 },
    { _tag: "Created", ...placeholders }
  )
)

const collapse = (text: string) => text.replace(/\\\n/g, " ").replace(/\s+/g, " ").trim()

describe("the README's first steps", () => {
  it.effect("show the demo merchant as the start banner prints it", () =>
    Effect.gen(function* () {
      const lines = yield* firstStart
      const from = lines.findIndex((line) => line.startsWith("  Demo merchant"))
      const to = lines.findIndex((line) => line.trimStart().startsWith('-d \'{"client_id"'))
      expect(from).toBeGreaterThanOrEqual(0)
      expect(to).toBeGreaterThan(from)
      expect(readme).toContain(lines.slice(from, to + 1).join("\n"))
    })
  )

  it.effect("get the token with the banner's token command", () =>
    Effect.gen(function* () {
      const lines = yield* firstStart
      const at = lines.findIndex((line) => line.trimStart().startsWith("token:"))
      expect(at).toBeGreaterThanOrEqual(0)
      const command = collapse([lines[at]!.replace(/^\s*token:/, ""), lines[at + 1]!].join("\n"))
      expect(command).toMatch(/^curl .*\/users\/demo\/tokens .*<client_secret>"}'$/)
      const step2 = readme.slice(readme.indexOf("### 2."))
      const block = /```sh\n([\s\S]*?)```/.exec(step2)?.[1] ?? ""
      const tokenStep = /^TOKEN=\$\(([\s\S]*?) \| jq -r \.data\.token\)$/m.exec(block)
      expect(tokenStep, block).not.toBeNull()
      expect(collapse(tokenStep![1]!)).toBe(command)
    })
  )
})

describe("the API reference's payment example", () => {
  const tryIt = (databaseUrl: Effect.Effect<string, never, Scope.Scope>) =>
    Effect.gen(function* () {
      const config = yield* configOf({ COBRO_DATABASE_URL: yield* databaseUrl })
      yield* Effect.gen(function* () {
        expect((yield* Admin.ensureDemo())._tag).toBe("Created")
        const document = yield* get("/openapi.json")
        const body = document.body as {
          paths: Record<
            string,
            Record<string, { requestBody: { content: Record<string, { example: unknown }> } }>
          >
        }
        const example = body.paths["/payments/"]!["post"]!.requestBody.content["application/json"]!
          .example as Record<string, unknown>
        expect(example["user_id"]).toBe("demo")
        const created = yield* postJson("/payments/", example)
        expect(created.status, JSON.stringify(created.body)).toBe(200)
        expect((created.body as { data: { id: string } }).data.id).toBe(
          `VAR-demo-${String(example["external_id"])}`
        )
      }).pipe(Effect.provide(serverLayer(config)))
    })

  it.scopedLive("creates a payment for the sandbox's demo merchant (SQLite)", () => tryIt(tempDb))
  it.scopedLive.skipIf(!pg)("creates a payment for the sandbox's demo merchant (Postgres)", () =>
    tryIt(freshPgUrl)
  )
})
