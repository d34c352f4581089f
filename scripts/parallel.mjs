#!/usr/bin/env node
/* global Buffer, console, process */
// `node scripts/parallel.mjs a b …` runs `npm run a`, `npm run b`, … side by side and fails when
// any of them fails. `npm test` runs the type-check and the lint this way: each is one process on
// one core, so on a two-core machine the pair takes as long as the longer one
// (docs/decisions/0095-fast-suite.md). Each script's output is printed whole when it ends, so the
// two do not interleave.
import { spawn } from "node:child_process"

const scripts = process.argv.slice(2)
if (scripts.length === 0) {
  console.error("usage: node scripts/parallel.mjs <npm script> [<npm script> …]")
  process.exit(2)
}
const npm = process.platform === "win32" ? "npm.cmd" : "npm"

const runOne = (name) =>
  new Promise((resolve) => {
    const started = Date.now()
    const child = spawn(npm, ["run", name], {
      stdio: ["ignore", "pipe", "pipe"],
      shell: process.platform === "win32"
    })
    const output = []
    child.stdout.on("data", (chunk) => output.push(chunk))
    child.stderr.on("data", (chunk) => output.push(chunk))
    let ended = false
    const done = (code, error) => {
      if (ended) return
      ended = true
      const seconds = ((Date.now() - started) / 1000).toFixed(1)
      process.stdout.write(Buffer.concat(output))
      if (error !== undefined) console.error(error)
      console.log(`> npm run ${name}: ${code === 0 ? "ok" : `failed (${code})`} in ${seconds} s`)
      resolve(code)
    }
    child.on("error", (error) => done(1, error))
    child.on("close", (code, signal) => done(code ?? (signal === null ? 1 : 128), undefined))
  })

const codes = await Promise.all(scripts.map(runOne))
process.exitCode = codes.every((code) => code === 0) ? 0 : 1
