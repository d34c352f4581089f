/**
 * The `cobro` help as a newcomer reads it (issue 25): at most 100 columns, a description of its own
 * for every option (never the library's "A user-defined piece of text."), the full command in each
 * usage, and every variable the server's configuration reads, with its default, in `serve --help`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Cli, CliHelp, ServerConfig } from "../src/index.js"
import { cli } from "./support.js"

const helpOf = (args: ReadonlyArray<string>) =>
  Effect.map(cli(args, {}), (result) => {
    expect(Exit.isSuccess(result.exit), args.join(" ")).toBe(true)
    return result.stdout
  })

describe("cobro help", () => {
  it.effect("every command's help fits 100 columns, describes every option and shows the full command", () =>
    Effect.gen(function* () {
      const commands = CliHelp.leaves(Cli.command)
      expect(commands.map((c) => c.join(" "))).toEqual(expect.arrayContaining(["serve", "users create"]))
      const groups = [...new Set(commands.filter((c) => c.length > 1).map((c) => c[0]!))]
      for (const args of [
        [],
        ["--help"],
        ...groups.map((g) => [g]),
        ...commands.map((c) => [...c, "--help"])
      ]) {
        const text = yield* helpOf(args)
        const name = args.join(" ")
        for (const line of text.split("\n"))
          expect({ name, line, length: line.length <= 100 }).toMatchObject({ length: true })
        expect(text, name).not.toContain("A user-defined piece of text")
      }
      for (const path of commands) {
        const text = yield* helpOf([...path, "--help"])
        expect(text, path.join(" ")).toContain(`$ cobro ${path.join(" ")}`)
        // Every option has a description line of its own under it.
        const lines = text.split("\n")
        lines.forEach((line, i) => {
          if (/^ {2}[-(<]/.test(line)) expect(lines[i + 1], `${path.join(" ")}: ${line}`).toMatch(/^ {6}\S/)
        })
      }
      const root = yield* helpOf(["--help"])
      for (const path of commands) expect(root).toMatch(new RegExp(`^ {2}${path.join(" ")} +\\S`, "m"))
    })
  )

  it.effect("the lists of commands carry every command's description whole, wrapped", () =>
    Effect.gen(function* () {
      /** The text of a section (lines under `title` up to the next blank line), wrapped lines joined. */
      const section = (text: string, title: string) => {
        const lines = text.split("\n")
        const at = lines.indexOf(title)
        const end = lines.indexOf("", at)
        return lines.slice(at + 1, end < 0 ? undefined : end).map((l) => l.trim())
      }
      const joined = (lines: ReadonlyArray<string>) => lines.join(" ").replace(/\s+/g, " ")
      const root = joined(section(yield* helpOf(["--help"]), "COMMANDS"))
      for (const path of CliHelp.leaves(Cli.command)) {
        const description = joined(section(yield* helpOf([...path, "--help"]), "DESCRIPTION"))
        expect(description, path.join(" ")).not.toBe("")
        // In the root's list, and in its group's own list, the description follows the name whole.
        expect(root, path.join(" ")).toContain(`${path.join(" ")} ${description}`)
        if (path.length > 1) {
          const group = joined(section(yield* helpOf([path[0]!]), "COMMANDS"))
          expect(group, path.join(" ")).toContain(`${path.join(" ")} ${description}`)
        }
      }
    })
  )

  it.effect("serve --help names every variable the configuration reads, with its default", () =>
    Effect.gen(function* () {
      const text = yield* helpOf(["serve", "--help"])
      const source = ["../src/ServerConfig.ts", "../src/internal/otelConfig.ts"]
        .map((file) => fs.readFileSync(fileURLToPath(new URL(file, import.meta.url)), "utf8"))
        .join("\n")
      const literals = [...source.matchAll(/"((?:COBRO|OTEL)_[A-Z_]+|PORT)"/g)].map((m) => m[1]!)
      const names = new Set([...Object.values(ServerConfig.variables), ...literals])
      expect(names.size).toBeGreaterThanOrEqual(24)
      for (const name of names) expect(text, name).toMatch(new RegExp(`^ {2}${name} \\(default: .+\\)$`, "m"))
    })
  )
})
