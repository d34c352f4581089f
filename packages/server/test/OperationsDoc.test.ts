/**
 * `docs/operations.md` stays true: the migrations it lists are those `@cobro/sql` applies, in
 * order; and every command in it that starts the server (`npm start`, `cobro serve`) starts with
 * the settings it is given as written: the configuration loads, the server's start checks pass
 * (production needs a real bank) and, on BIND, BIND's settings load.
 */
import { describe, expect, it } from "@effect/vitest"
import { BindConfig } from "@cobro/bank-bind"
import { Migrations } from "@cobro/sql"
import { Config, Effect, Either, Option } from "effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { ServerConfig } from "../src/index.js"
import { configOf, provider } from "./support.js"

const doc = fs.readFileSync(fileURLToPath(new URL("../../../docs/operations.md", import.meta.url)), "utf8")

/** The section under `## title`, up to the next `## `. */
const section = (title: string) => {
  const start = doc.indexOf(`\n## ${title}\n`)
  expect(start, title).toBeGreaterThanOrEqual(0)
  const end = doc.indexOf("\n## ", start + 1)
  return doc.slice(start, end < 0 ? undefined : end)
}

/** The commands of the `sh` blocks, continuation lines joined, comments dropped. */
const shellCommands = (text: string): Array<string> =>
  [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
    block[1]!
      .replace(/\\\n\s*/g, " ")
      .split("\n")
      .map((line) => line.replace(/\s+#.*$/, "").trim())
      .filter((line) => line !== "" && !line.startsWith("#"))
  )

/** A valid secret key, standing in for `$(cat /run/secrets/…)`. */
const secretKey = Buffer.alloc(32, 7).toString("base64")

/** The `NAME=value` assignments before the command, `"$(…)"` read as a secret file's content. */
const environmentOf = (command: string): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const match of command.matchAll(/(?:^|\s)([A-Z][A-Z0-9_]*)=("\$\([^)]*\)"|"[^"]*"|\S+)/g)) {
    const raw = match[2]!
    env[match[1]!] = raw.startsWith('"$(') ? secretKey : raw.replace(/^"|"$/g, "").replace("…", "client-id")
  }
  return env
}

describe("docs/operations.md", () => {
  it.effect("lists every migration of @cobro/sql, in order", () =>
    Effect.gen(function* () {
      const listed = [...section("Migrations on upgrade").matchAll(/^- `(\d{4}_[a-z0-9_]+)`$/gm)].map(
        (m) => m[1]!
      )
      const applied = (yield* Migrations.loader).map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)
      expect(applied.length).toBeGreaterThanOrEqual(22)
      expect(listed).toEqual(applied)
    })
  )

  it.effect("every command that starts the server starts with the settings written", () =>
    Effect.gen(function* () {
      const starts = shellCommands(doc).filter((c) => /(?:npm start|cobro serve)$/.test(c))
      // The plain start, the Postgres sandbox, Postgres in production on BIND, traces.
      expect(starts.length).toBeGreaterThanOrEqual(4)
      expect(starts.some((c) => c.includes("COBRO_MODE=production"))).toBe(true)
      for (const command of starts) {
        const env = environmentOf(command)
        const config = yield* Effect.either(configOf(env))
        expect(Either.isRight(config) ? "" : config.left.message, command).toBe("")
        if (Either.isLeft(config)) continue
        expect(Option.getOrUndefined(ServerConfig.startProblem(config.right)), command).toBeUndefined()
        if (config.right.bank === "bind") {
          const bind = yield* Effect.either(
            Effect.withConfigProvider(
              Config.all([BindConfig.config, BindConfig.ingressConfig]),
              provider(env)
            )
          )
          expect(Either.isRight(bind) ? "" : String(bind.left), command).toBe("")
        }
      }
    })
  )
})
