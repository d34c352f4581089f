import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig, type Options } from "tsup"

type Plugin = NonNullable<Options["plugins"]>[number]

/** What the build reads of the package's package.json. */
interface Manifest {
  readonly name: string
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
}

/** The module each entry point of a package that imports `effect` runs first. */
const requireEffectSource = fileURLToPath(
  new URL("./packages/core/src/internal/requireEffect.ts", import.meta.url)
)

/** `^3.22.4` as a README names it: `^3.22`. */
const shortRange = (range: string) => range.replace(/^(\^\d+\.\d+)\.\d+$/, "$1")

/**
 * The `effect` range of the package and the command that installs what it takes from the host:
 * `effect` and every required `@effect/*` peer, at the package's ranges.
 */
const effectRequirement = (manifest: Manifest) => {
  const range = manifest.peerDependencies?.["effect"] ?? manifest.dependencies?.["effect"]
  if (range === undefined) throw new Error(`${manifest.name} does not depend on effect`)
  const peers = Object.entries(manifest.peerDependencies ?? {}).filter(
    ([name]) =>
      (name === "effect" || name.startsWith("@effect/")) &&
      manifest.peerDependenciesMeta?.[name]?.optional !== true
  )
  const install = (peers.length > 0 ? peers : [["effect", range] as const])
    .map(([name, peerRange]) => `${name}@${shortRange(peerRange)}`)
    .sort((a, b) => (a.startsWith("effect@") ? -1 : b.startsWith("effect@") ? 1 : a.localeCompare(b)))
  return { name: manifest.name, range, install: `npm install ${install.join(" ")}` }
}

/**
 * Writes each entry point of the package (`dist/index.js`, …) as a module that checks the
 * `effect` the package resolves (`requireEffect`) and only then imports the bundle of that entry
 * (`dist/impl/index.js`) and re-exports its names: a module that statically imported the bundle
 * would be linked, and fail on effect 4, before the check ran (docs/decisions/0063-effect-3-check.md).
 */
const effectEntries = (names: ReadonlyArray<string>): Plugin => {
  const bundles = new Map<string, ReadonlyArray<string>>()
  return {
    name: "cobro-effect-entries",
    renderChunk(_code, chunk) {
      const name = path.basename(chunk.path, ".js")
      if (
        chunk.entryPoint !== undefined &&
        path.basename(path.dirname(chunk.path)) === "impl" &&
        names.includes(name)
      )
        bundles.set(name, chunk.exports ?? [])
    },
    buildEnd() {
      const manifest: Manifest = JSON.parse(fs.readFileSync("package.json", "utf8"))
      const requirement = JSON.stringify(effectRequirement(manifest))
      for (const [name, exported] of bundles) {
        const named = exported.filter((e) => e !== "default")
        const lines = [
          `// ${manifest.name}: checks the effect it resolves, then loads ./impl/${name}.js (tsup.base.ts).`,
          `import { requireEffect } from "./requireEffect.js"`,
          `await requireEffect(${requirement}, () => import("effect/package.json", { with: { type: "json" } }))`,
          `const bundle = await import("./impl/${name}.js")`,
          ...(named.length > 0 ? [`export const { ${named.join(", ")} } = bundle`] : []),
          ...(exported.includes("default") ? [`export default bundle.default`] : [])
        ]
        fs.writeFileSync(path.join(this.options.outDir, `${name}.js`), `${lines.join("\n")}\n`)
      }
    }
  }
}

/**
 * The build every package shares: ESM for Node 20 with source maps. Declarations are not tsup's
 * (one bundled file per entry lost the types of namespaces re-exported with `export * as`): each
 * package's `tsconfig.build.json` emits one per source file (`npm run build` runs both).
 *
 * With `effect: true` (every package but `@cobro/client`), each entry point checks the `effect`
 * it resolves before it loads anything that imports it.
 */
export const packageBuild = (entry: ReadonlyArray<string>, options: { readonly effect?: boolean } = {}) => {
  const names = entry.map((file) => path.basename(file, ".ts"))
  const effect = options.effect ?? true
  return defineConfig({
    entry: effect
      ? {
          ...Object.fromEntries(entry.map((file, i) => [`impl/${names[i]}`, file])),
          requireEffect: requireEffectSource
        }
      : [...entry],
    format: ["esm"],
    dts: false,
    sourcemap: true,
    clean: true,
    target: "node20",
    plugins: effect ? [effectEntries(names)] : []
  })
}
