/**
 * `docs/errors.md` is the one catalogue of the dotted keys sent as `message`. This test scans the
 * sources for every key they can produce and fails when the catalogue misses one, lists one the
 * sources no longer produce, or gives a key another status than the code does.
 *
 * The scan reads source text: the calls that make errors (`NotFound.of`, `InvalidInput.of`,
 * `ApiError.of`, `new Conflict({ key })`, state-machine `transition(…, key)`, …) and the few
 * templated keys, expanded from what fills them in. A templated key it does not know fails the
 * test, so a new kind of key cannot slip past it.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

/** Where error keys are made: the engine, its HTTP layer, the SQL adapters and the webhooks. */
const SOURCES = [
  "packages/core/src",
  "packages/bank-sandbox/src",
  "packages/http/src",
  "packages/sql/src",
  "packages/webhooks/src"
]

const KEY = "[a-z0-9_]+(?:\\.[a-z0-9_]+)+"
const isKey = new RegExp(`^${KEY}$`)

/** The HTTP status of each domain error tag (`ApiError.fromDomain`). */
const STATUS_OF_TAG: Record<string, number> = {
  InvalidInput: 400,
  Unauthenticated: 401,
  NotPermitted: 403,
  NotFound: 404,
  Conflict: 409,
  RequestMismatch: 422,
  ProviderFailure: 502,
  Discontinued: 503
}

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith(".ts") ? [path] : []
  })

/**
 * The top-level arguments of the call whose `(` is at `open`, as source text. Strings and
 * template literals are skipped whole, so commas and brackets inside them do not count.
 */
const argumentsAt = (source: string, open: number): Array<string> => {
  const args: Array<string> = []
  let depth = 0
  let start = open + 1
  for (let i = open; i < source.length; i++) {
    const c = source[i]!
    if (c === '"' || c === "'" || c === "`") {
      for (i++; i < source.length && source[i] !== c; i++) if (source[i] === "\\") i++
    } else if (c === "(" || c === "[" || c === "{") depth++
    else if (c === ")" || c === "]" || c === "}") {
      if (--depth === 0) {
        args.push(source.slice(start, i).trim())
        return args.filter((a) => a !== "")
      }
    } else if (c === "," && depth === 1) {
      args.push(source.slice(start, i).trim())
      start = i + 1
    }
  }
  return args
}

/** Each call of `callee` (a regex source ending before the `(`) with its arguments. */
const callsOf = (source: string, callee: string) =>
  [...source.matchAll(new RegExp(`${callee}\\(`, "g"))].map((m) => ({
    match: m,
    args: argumentsAt(source, m.index + m[0].length - 1)
  }))

const literal = (text: string | undefined): string | undefined => {
  const m = text === undefined ? null : /^"([^"]*)"$/.exec(text)
  return m !== null && isKey.test(m[1]!) ? m[1] : undefined
}

const literalsIn = (text: string) => [...text.matchAll(new RegExp(`"(${KEY})"`, "g"))].map((m) => m[1]!)

/** The templated keys the scan knows how to expand (see `scan`). */
const TEMPLATES = new Set(["${resource}.not.found", "${machine.name}.transition.invalid", "${what}.id.taken"])

interface Found {
  /** Statuses the code gives the key (empty when the scan cannot tell). */
  readonly statuses: Set<number>
  readonly files: Set<string>
}

const scan = () => {
  const found = new Map<string, Found>()
  const unknownTemplates: Array<string> = []
  const add = (key: string, status: number | undefined, file: string) => {
    const entry = found.get(key) ?? { statuses: new Set<number>(), files: new Set<string>() }
    if (status !== undefined) entry.statuses.add(status)
    entry.files.add(file)
    found.set(key, entry)
  }
  const files = SOURCES.flatMap((dir) => filesUnder(join(root, dir)))
  const sources = files.map((path) => ({ file: relative(root, path), text: readFileSync(path, "utf8") }))

  // Named key constants (`export const prefixNotSetKey = "user.alias.prefix.not.set"`).
  const constants = new Map<string, string>()
  for (const { text } of sources) {
    for (const m of text.matchAll(new RegExp(`const (\\w+Key)\\s*=\\s*"(${KEY})"`, "g")))
      constants.set(m[1]!, m[2]!)
  }
  const resolve = (arg: string | undefined) =>
    literal(arg) ?? (arg === undefined ? undefined : constants.get(arg.split(".").pop()!))

  for (const { file, text } of sources) {
    // Every literal `key: "…"`, whatever builds it (the status is refined below).
    for (const m of text.matchAll(new RegExp(`\\bkey:\\s*"(${KEY})"`, "g"))) add(m[1]!, undefined, file)
    for (const m of text.matchAll(/\bkey:\s*(?:[\w.]+\s*\?\?\s*)?`([^`]*)`/g)) {
      const template = m[1]!
      if (TEMPLATES.has(template)) continue
      // `split.${taken}.taken` where `(taken: Taken)` and `type Taken = "cvu" | "alias"`: each member.
      const variable = /^[a-z0-9_.]*\$\{(\w+)\}[a-z0-9_.]*$/.exec(template)?.[1]
      const type = variable && new RegExp(`\\(${variable}: (\\w+)\\)`).exec(text)?.[1]
      const union = type && new RegExp(`type ${type} =([^\\n]*)`).exec(text)?.[1]
      const members = union ? [...union.matchAll(/"([a-z0-9_]+)"/g)].map((u) => u[1]!) : []
      if (members.length === 0) unknownTemplates.push(`${file}: ${template}`)
      const tag = /new (?:Errors\.)?(\w+)\(\{\s*key:\s*`/.exec(text)?.[1]
      for (const member of members)
        add(template.replace(`\${${variable}}`, member), STATUS_OF_TAG[tag ?? ""], file)
    }
    for (const [name, key] of constants) if (text.includes(`const ${name}`)) add(key, undefined, file)

    // new Conflict({ key: "…" }), new Errors.NotFound({ key: … }), new ApiError({ status, key }).
    for (const { match, args } of callsOf(text, "new (?:Errors\\.)?(\\w+)")) {
      const tag = match[1]!
      const object = args[0] ?? ""
      const status = tag === "ApiError" ? Number(/status:\s*(\d{3})/.exec(object)?.[1]) : STATUS_OF_TAG[tag]
      if (status === undefined || Number.isNaN(status)) continue
      const key = new RegExp(`\\bkey:\\s*(?:[\\w.]+\\s*\\?\\?\\s*)?"(${KEY})"`).exec(object)?.[1]
      if (key !== undefined) add(key, status, file)
      // key: someMap[trigger]: every value of that map (`refusalKey` in Payment.ts).
      const map = /\bkey:\s*(\w+)\[/.exec(object)?.[1]
      const body =
        map === undefined ? undefined : new RegExp(`const ${map}\\b[^=]*=\\s*\\{([^}]*)\\}`).exec(text)
      if (body) for (const k of literalsIn(body[1]!)) add(k, status, file)
    }
    for (const { args } of callsOf(text, "NotFound\\.of")) {
      const resource = /^"([a-z0-9_]+)"$/.exec(args[0] ?? "")?.[1]
      if (resource !== undefined) add(`${resource}.not.found`, 404, file)
    }
    for (const { args } of callsOf(text, "InvalidInput\\.of")) {
      add(args[2] === undefined ? "request.invalid" : (resolve(args[2]) ?? "?"), 400, file)
    }
    for (const { args } of callsOf(text, "ApiError\\.of")) {
      const status = Number(args[0])
      for (const key of literalsIn(args[1] ?? "")) add(key, status, file)
    }
    // State machines: `transition(machine, from, to, key?)` refuses with a Conflict.
    for (const { args } of callsOf(text, "\\btransition")) {
      const key = literal(args[3])
      if (key !== undefined) add(key, 409, file)
    }
    if (text.includes("${machine.name}.transition.invalid")) {
      for (const m of text.matchAll(new RegExp(`\\bname:\\s*"(${KEY})"`, "g"))) {
        add(`${m[1]}.transition.invalid`, 409, file)
      }
    }
    // Repository conflicts: conflict("key", …), Option.some("key") (then `new Conflict({ key })`).
    for (const { args } of callsOf(text, "\\bconflict")) {
      const key = literal(args[0])
      if (key !== undefined) add(key, 409, file)
    }
    for (const m of text.matchAll(new RegExp(`Option\\.some\\("(${KEY})"\\)`, "g"))) add(m[1]!, 409, file)
    // Success messages: ok("payment.created", …), streamedList("payments.found", …).
    for (const { args } of callsOf(text, "\\b(?:ok|streamedList)")) {
      const key = literal(args[0])
      if (key !== undefined) add(key, 200, file)
    }
    if (text.includes("${what}.id.taken")) {
      for (const { args } of callsOf(text, "\\btaken")) {
        const what = /^"([a-z0-9_]+)"$/.exec(args[0] ?? "")?.[1]
        if (what !== undefined) add(`${what}.id.taken`, 409, file)
      }
    }
  }
  found.delete("?")
  return { found, unknownTemplates }
}

/** The rows of the catalogue's tables: `` | `key` | 404 | … | `` (several statuses allowed). */
const catalogue = () => {
  const text = readFileSync(join(root, "docs/errors.md"), "utf8")
  const rows = new Map<string, Set<number>>()
  for (const m of text.matchAll(/^\|\s*`([^`]+)`\s*\|([^|]*)\|/gm)) {
    rows.set(m[1]!, new Set([...m[2]!.matchAll(/\b[1-5]\d\d\b/g)].map((s) => Number(s[0]))))
  }
  return rows
}

describe("docs/errors.md", () => {
  const { found, unknownTemplates } = scan()
  const rows = catalogue()

  it("the scan finds the keys it must (it is not silently blind)", () => {
    for (const key of [
      "payment.not.found",
      "request.invalid",
      "auth.token.missing",
      "auth.token.expired",
      "verification.code.invalid",
      "user.alias.prefix.not.set",
      "split.payouts.already_instructed",
      "split.account.status.transition.invalid",
      "schedule.id.taken",
      "payment.not.pending",
      "rate.limit.exceeded",
      "webhook_delivery.not.found"
    ]) {
      expect(found.has(key), key).toBe(true)
    }
    expect(found.get("split.payouts.already_instructed")?.statuses).toEqual(new Set([409]))
    expect(found.get("auth.token.missing")?.statuses).toEqual(new Set([401]))
    expect(unknownTemplates).toEqual([])
  })

  it("lists every key the sources can produce", () => {
    const missing = [...found.keys()].filter((key) => !rows.has(key)).sort()
    expect(missing).toEqual([])
  })

  it("lists no key the sources no longer produce", () => {
    const stale = [...rows.keys()].filter((key) => !found.has(key)).sort()
    expect(stale).toEqual([])
  })

  it("gives each key the status the code answers with", () => {
    const wrong = [...found]
      .filter(([key, { statuses }]) => [...statuses].some((s) => !rows.get(key)?.has(s)))
      .map(
        ([key, { statuses }]) =>
          `${key}: code ${[...statuses].join("/")}, doc ${[...(rows.get(key) ?? [])].join("/")}`
      )
    expect(wrong).toEqual([])
    for (const [key, statuses] of rows) expect([key, statuses.size > 0]).toEqual([key, true])
  })
})
