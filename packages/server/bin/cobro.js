#!/usr/bin/env node
/* global console, process, URL */
// The `cobro` command. In a source checkout (src/ is present) it runs the TypeScript sources, so
// a fresh clone needs no build step:
//
// 1. bin/bundle.mjs (a short child process, about 0.3 s) bundles them with esbuild into plain
//    JavaScript under node_modules/.cache/cobro/ of this package, and this process runs that.
//    Running the sources through tsx in this process instead kept tsx's loader thread (a second
//    V8 isolate), its transformed sources and source maps: about 75 MB of an idle server;
// 2. without esbuild, or when the bundle cannot be built or linked, it runs the sources through
//    tsx in this process, as `COBRO_RUNNER=tsx` always does (stack traces then point at the
//    TypeScript sources; with the bundle, `NODE_OPTIONS=--enable-source-maps` does that).
//
// An installed package (dist/ only) runs the built JavaScript. Either way one process runs the
// program, so signals reach its runtime directly.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { register } from "node:module"
import { fileURLToPath, pathToFileURL } from "node:url"
import { setFlagsFromString } from "node:v8"

// `serve` starts with V8's young generation held at its initial size (docs/decisions/0048-idle-memory.md,
// "The young generation held small while the server starts"): loading the modules and building the
// server allocate a lot that lives on, so V8 doubles the young generation up to its maximum (two
// 16 MB semi-spaces), and an idle server kept it until V8's memory reducer shrank it a minute later.
// `Server.run` lets it grow again (V8's default factor, 2) once the server has started, so a server
// under load sizes it as before. Not when the operator passes a semi-space flag of their own.
const ownSemiSpace = /semi-space/.test(`${process.execArgv.join(" ")} ${process.env["NODE_OPTIONS"] ?? ""}`)
if (process.argv[2] === "serve" && !ownSemiSpace) {
  setFlagsFromString("--semi-space-growth-factor=1")
  globalThis[Symbol.for("cobro.releaseYoungGeneration")] = () =>
    setFlagsFromString("--semi-space-growth-factor=2")
}

const source = new URL("../src/main.ts", import.meta.url)
const built = new URL("../dist/main.js", import.meta.url)

/** The bundle's entry file, or undefined. */
const bundle = () => {
  if (process.env["COBRO_RUNNER"] === "tsx") return undefined
  const result = spawnSync(process.execPath, [fileURLToPath(new URL("./bundle.mjs", import.meta.url))], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"]
  })
  const file = result.status === 0 ? result.stdout.trim() : ""
  return file !== "" && existsSync(file) ? pathToFileURL(file) : undefined
}

/** Runs the bundle; false when it does not link (then none of its code ran). */
const runBundle = async (file) => {
  try {
    await import(file.href)
    return true
  } catch (error) {
    // An npm package it names cannot be found from the cache: linking failed before any code
    // ran. Any other failure is the program's own.
    if (error?.code === "ERR_MODULE_NOT_FOUND") return false
    throw error
  }
}

const loadTsx = async () => {
  try {
    return await import("tsx/esm/api")
  } catch {
    return undefined
  }
}

const run = async () => {
  if (existsSync(source)) {
    const file = bundle()
    if (file !== undefined && (await runBundle(file))) return
    const tsx = await loadTsx()
    if (tsx !== undefined) {
      tsx.register()
      register("./source-condition.mjs", import.meta.url)
      await import(source.href)
      return
    }
  }
  if (existsSync(built)) {
    await import(built.href)
    return
  }
  console.error(
    "cobro: found neither esbuild nor tsx to run the sources (run `npm install`) nor dist/main.js (run `npm run build`)"
  )
  process.exitCode = 1
}

await run()
