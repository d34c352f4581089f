/**
 * The layering of core's folders, as docs/architecture.md ("Layering inside `@cobro/core`")
 * states it: every import of packages/core/src, read with TypeScript's own pre-processor, goes
 * to its own folder, its own layer or a lower one, and no two folders (or top-level modules)
 * import each other.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const here = path.dirname(fileURLToPath(import.meta.url))
const src = path.resolve(here, "../src")
const architecture = path.resolve(here, "../../../docs/architecture.md")

/** A unit: a folder of src (`payments/`) or a top-level module (`Jobs.ts`). */
const unitOf = (file: string): string => {
  const [first, ...rest] = path.relative(src, file).split(path.sep)
  return rest.length > 0 ? `${first}/` : first!
}

/** The layers of the document's marked block: unit → its layer. */
const readLayers = (markdown: string): ReadonlyMap<string, number> => {
  const block = /<!-- layering:start[^]*?```text\n([^]*?)```[^]*?<!-- layering:end -->/.exec(markdown)
  if (block === null) throw new Error("docs/architecture.md has no layering block")
  const layers = new Map<string, number>()
  for (const line of block[1]!.split("\n").filter((l) => l.trim() !== "")) {
    const [rank, ...units] = line.trim().split(/\s+/)
    for (const unit of units) layers.set(unit, Number(rank))
  }
  return layers
}

/** Every import between two units: "from -> to" → the files that make it. */
const readImports = (): ReadonlyMap<string, ReadonlyArray<string>> => {
  const edges = new Map<string, Array<string>>()
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) visit(file)
      else if (file.endsWith(".ts")) {
        const info = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true)
        for (const { fileName } of info.importedFiles) {
          if (!fileName.startsWith(".")) continue
          const target = path.resolve(path.dirname(file), fileName.replace(/\.js$/, ".ts"))
          const edge = `${unitOf(file)} -> ${unitOf(target)}`
          if (unitOf(file) === unitOf(target)) continue
          edges.set(edge, [...(edges.get(edge) ?? []), path.relative(src, file)])
        }
      }
    }
  }
  visit(src)
  return edges
}

/** What breaks the layering: imports that run up, pairs that import each other, unplaced units. */
const violations = (edges: Iterable<string>, layers: ReadonlyMap<string, number>) => {
  const counted = new Set(edges)
  const unplaced = new Set<string>()
  const upward: Array<string> = []
  const pairs: Array<string> = []
  for (const edge of counted) {
    const [from, to] = edge.split(" -> ") as [string, string]
    const a = layers.get(from)
    const b = layers.get(to)
    if (a === undefined) unplaced.add(from)
    if (b === undefined) unplaced.add(to)
    if (a !== undefined && b !== undefined && b > a) upward.push(`${edge} (layer ${a} imports layer ${b})`)
    if (from < to && counted.has(`${to} -> ${from}`)) pairs.push(`${from} <-> ${to}`)
  }
  return { unplaced: [...unplaced].sort(), upward: upward.sort(), pairs: pairs.sort() }
}

describe("core's layering (docs/architecture.md)", () => {
  const layers = readLayers(fs.readFileSync(architecture, "utf8"))
  const imports = readImports()

  it("places every folder and top-level module of src on a layer, and only those", () => {
    const units = new Set(
      fs.readdirSync(src, { withFileTypes: true }).map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    )
    expect([...units].filter((u) => !layers.has(u)).sort()).toEqual([])
    expect([...layers.keys()].filter((u) => !units.has(u)).sort()).toEqual([])
  })

  it("has no import that runs up a layer and no two folders that import each other", () => {
    const found = violations(imports.keys(), layers)
    const detail = (edge: string) => `${edge}: ${(imports.get(edge.split(" (")[0]!) ?? []).join(", ")}`
    expect(found.unplaced).toEqual([])
    expect(found.upward.map(detail)).toEqual([])
    expect(found.pairs).toEqual([])
  })

  it("finds an import up a layer and a pair of folders importing each other", () => {
    const layered = new Map([
      ["low/", 0],
      ["high/", 1]
    ])
    expect(violations(["low/ -> high/", "high/ -> low/"], layered)).toEqual({
      unplaced: [],
      upward: ["low/ -> high/ (layer 0 imports layer 1)"],
      pairs: ["high/ <-> low/"]
    })
    expect(violations(["high/ -> low/", "new/ -> low/"], layered)).toEqual({
      unplaced: ["new/"],
      upward: [],
      pairs: []
    })
  })
})
