/* global console, process */
/**
 * Where a V8 CPU profile (`node --cpu-prof`, e.g. from `PROFILE_DIR=… node bench/cpu-ab.mjs …`)
 * spends its time: self time by function and by package or source folder, the top entries of each.
 * Not part of the tests.
 *
 *   node bench/profile-summary.mjs /tmp/prof/CPU.….cpuprofile [entries]
 */
import * as fs from "node:fs"

const [file, top = "40"] = process.argv.slice(2)
const profile = JSON.parse(fs.readFileSync(file, "utf8"))
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const self = new Map()
const deltas = profile.timeDeltas
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]
  self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0))
}
// Idle samples are left out: percentages are of the time the process was busy.
for (const [id] of self) if (byId.get(id).callFrame.functionName === "(idle)") self.delete(id)
const total = [...self.values()].reduce((a, b) => a + b, 0)
/** The package (node_modules/<name>) or our own source folder a script belongs to. */
const area = (url) => {
  if (!url) return "(native)"
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:dist\/[^/]+\/)?([^/]*)/.exec(url)
  if (m) return `${m[1]}`
  const src = /packages\/([^/]+)\/src\/(.*)$/.exec(url)
  if (src) return `@cobro/${src[1]}/${src[2].split("/").slice(0, -1).join("/")}`
  return url.replace(/^.*\//, "")
}
const parent = new Map()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
/** Time of samples with `area` anywhere on their stack (each area once a sample). */
const inclusive = new Map()
const inclusiveFiles = new Map()
for (const [id, time] of self) {
  const areas = new Set()
  const files = new Set()
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const url = byId.get(at).callFrame.url
    areas.add(area(url))
    if (url) files.add(url.replace(/^.*node_modules\//, "").replace(/^.*packages\//, ""))
  }
  for (const a of areas) inclusive.set(a, (inclusive.get(a) ?? 0) + time)
  for (const f of files) inclusiveFiles.set(f, (inclusiveFiles.get(f) ?? 0) + time)
}
const fnKey = (frame) =>
  `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*node_modules\//, "").replace(/^.*packages\//, "")}:${frame.lineNumber + 1}`
const add = (map, key, value) => map.set(key, (map.get(key) ?? 0) + value)
const fns = new Map()
const areas = new Map()
for (const [id, time] of self) {
  const frame = byId.get(id).callFrame
  add(fns, fnKey(frame), time)
  add(areas, area(frame.url), time)
}
const print = (title, map) => {
  console.log(`\n${title}`)
  for (const [key, time] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(top)))
    console.log(`${((time / total) * 100).toFixed(1).padStart(5)} %  ${key}`)
}
console.log(`${(total / 1e6).toFixed(2)} s busy`)
print("self time by area", areas)
print("self time by function", fns)
print("inclusive time by area (on the stack)", inclusive)
print("inclusive time by file (on the stack)", inclusiveFiles)
