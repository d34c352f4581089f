#!/usr/bin/env node
/* global console, process, URL */
// The `cobro` command. In a source checkout (src/ is present and tsx is installed) it runs the
// TypeScript sources in this process, through tsx and with the workspace's `@cobro/source`
// export condition, so a fresh clone needs no build step. An installed package (dist/ only) runs
// the built JavaScript.
import { existsSync } from "node:fs"
import { register } from "node:module"

const source = new URL("../src/main.ts", import.meta.url)
const built = new URL("../dist/main.js", import.meta.url)

const loadTsx = async () => {
  try {
    return await import("tsx/esm/api")
  } catch {
    return undefined
  }
}

const tsx = existsSync(source) ? await loadTsx() : undefined
if (tsx !== undefined) {
  tsx.register()
  register("./source-condition.mjs", import.meta.url)
  await import(source.href)
} else if (existsSync(built)) {
  await import(built.href)
} else {
  console.error(
    "cobro: found neither the sources with tsx (run `npm install`) nor dist/main.js (run `npm run build`)"
  )
  process.exitCode = 1
}
