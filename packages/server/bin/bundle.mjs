/* global console, process, URL */
// Bundles the server's sources for bin/cobro.js, in a process of its own so that esbuild never
// occupies the server's memory: src/main.ts and the workspace's `@cobro/*` sources (their
// `@cobro/source` export condition) into ES modules under node_modules/.cache/cobro/<hash>/ of
// this package; npm packages stay external (loaded from node_modules); dynamic imports become
// chunks of their own, so what the server loads lazily (the storage driver) stays lazy. Prints
// the bundle's entry file; exit code 1 (and nothing printed) when esbuild is missing or fails.
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const source = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const cache = fileURLToPath(new URL("../node_modules/.cache/cobro/", import.meta.url))
const outdir = Path.join(cache, "build")

try {
  const esbuild = await import("esbuild")
  const result = await esbuild.build({
    entryPoints: { main: source },
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@cobro/source"],
    outdir,
    outExtension: { ".js": ".mjs" },
    sourcemap: "linked",
    write: false,
    logLevel: "silent",
    plugins: [
      {
        // Only the workspace's packages go into the bundle; npm packages load from node_modules.
        name: "cobro-external",
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith("@cobro/") ? undefined : { path: args.path, external: true }
          )
        }
      }
    ]
  })
  const files = result.outputFiles
    .map((f) => ({ name: Path.relative(outdir, f.path), contents: f.contents }))
    .sort((a, b) => (a.name < b.name ? -1 : 1))
  const hash = createHash("sha256")
  for (const f of files) hash.update(f.name).update("\0").update(f.contents)
  const id = hash.digest("hex").slice(0, 16)
  const target = Path.join(cache, id)
  // One directory per content, written aside and renamed into place: instances starting
  // together never read each other's half-written files.
  if (!existsSync(Path.join(target, "main.mjs"))) {
    const temporary = Path.join(cache, `${id}.${process.pid}.tmp`)
    for (const f of files) {
      mkdirSync(Path.dirname(Path.join(temporary, f.name)), { recursive: true })
      writeFileSync(Path.join(temporary, f.name), f.contents)
    }
    try {
      renameSync(temporary, target)
    } catch {
      rmSync(temporary, { recursive: true, force: true }) // another instance put the same files there
    }
    // Bundles of older sources go after a day (an instance may be about to run one).
    for (const name of readdirSync(cache)) {
      const entry = Path.join(cache, name)
      try {
        if (name !== id && Date.now() - statSync(entry).mtimeMs > 86_400_000) {
          rmSync(entry, { recursive: true, force: true })
        }
      } catch {
        // best effort
      }
    }
  }
  await esbuild.stop?.()
  console.log(Path.join(target, "main.mjs"))
} catch {
  process.exitCode = 1
}
