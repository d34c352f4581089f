/**
 * The repository's documents stand alone: every relative link and every path they name in code
 * spans (`docs/errors.md`, `../webhooks/README.md`) resolves to a file or folder inside the
 * repository. A document that sends a reader outside it (to a file only the authors have) fails.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))

const documents = (): ReadonlyArray<string> => {
  const found: Array<string> = []
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".") || entry.name === "build") continue
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.name.endsWith(".md")) found.push(full)
    }
  }
  walk(root)
  return found
}

/** Relative link targets of a Markdown text: each must exist. */
const linksOf = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/i.test(t))

/** Paths named in code spans (`../x`, `./y`): each must stay inside the repository (a file the
 * server creates at run time, such as `./.cobro/cobro.db`, need not exist). */
const spansOf = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/`(\.{1,2}\/[^`\s]+)`/g)].map((m) => m[1]!)

describe("documents", () => {
  it("name only files inside the repository", () => {
    const files = documents()
    expect(files.length).toBeGreaterThan(10)
    const broken: Array<string> = []
    for (const file of files) {
      const text = fs.readFileSync(file, "utf8")
      const check = (target: string, mustExist: boolean) => {
        const resolved = path.resolve(path.dirname(file), target)
        const where = `${path.relative(root, file)} → ${target}`
        if (path.relative(root, resolved).startsWith("..")) broken.push(`${where} (outside the repository)`)
        else if (mustExist && !fs.existsSync(resolved)) broken.push(`${where} (missing)`)
      }
      for (const target of linksOf(text)) check(target, true)
      for (const target of spansOf(text)) check(target, false)
    }
    expect(broken).toEqual([])
  })

  it("include the API reference the README points to", () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
    expect(readme).toContain("](docs/api.md)")
    expect(fs.readFileSync(path.join(root, "docs/api.md"), "utf8")).toMatch(/^# API reference/)
  })
})
