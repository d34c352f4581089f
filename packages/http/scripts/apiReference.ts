/**
 * `docs/api.md`, the API reference in Markdown: every route of the OpenAPI document the server
 * serves, with its summary, description, authentication, parameters, request body and success
 * body, field by field. It is rendered from the same document as `docs/openapi.json`, so the two
 * cannot disagree; `scripts/openapi.ts` writes both and `test/openApiDocument.test.ts` fails when
 * either is stale.
 */
import { fileURLToPath } from "node:url"

/** `docs/api.md` at the repository root. */
export const referencePath = fileURLToPath(new URL("../../../docs/api.md", import.meta.url))

type Json = { readonly [key: string]: unknown }

interface Operation {
  readonly tags?: ReadonlyArray<string>
  readonly summary?: string
  readonly description?: string
  readonly security?: ReadonlyArray<unknown>
  readonly parameters?: ReadonlyArray<{
    readonly name: string
    readonly in: string
    readonly required?: boolean
    readonly schema: Json
  }>
  readonly requestBody?: {
    readonly content: Record<string, { readonly schema: Json; readonly example?: unknown }>
  }
  readonly responses: Record<
    string,
    { readonly description: string; readonly content?: Record<string, { readonly schema: Json }> }
  >
}

interface Document {
  readonly info: { readonly title: string; readonly version: string; readonly description?: string }
  readonly paths: Record<string, Record<string, Operation>>
  readonly components: { readonly schemas: Record<string, Json> }
  readonly tags?: ReadonlyArray<{ readonly name: string; readonly description?: string }>
}

interface Field {
  readonly path: string
  readonly type: string
  readonly required: boolean
  readonly notes: string
}

/** Markdown table cells hold no pipes or line breaks. */
const cell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ")

const anchorOf = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, "")
    .replace(/ /g, "-")

const resolver = (document: Document) => {
  const resolve = (schema: Json): Json => {
    const ref = schema["$ref"]
    if (typeof ref !== "string") return schema
    const target = document.components.schemas[ref.split("/").pop()!]
    if (target === undefined) throw new Error(`unresolved reference ${ref}`)
    return resolve(target)
  }

  /** The component's name when the schema refers to an object component (rendered once, apart). */
  const namedObject = (schema: Json): string | undefined => {
    const ref = schema["$ref"]
    if (typeof ref !== "string") return undefined
    return resolve(schema)["properties"] === undefined ? undefined : ref.split("/").pop()!
  }

  /** A schema's members when it is a union (`anyOf`/`oneOf`), else undefined. */
  const membersOf = (schema: Json): ReadonlyArray<Json> | undefined =>
    (schema["anyOf"] ?? schema["oneOf"]) as ReadonlyArray<Json> | undefined

  const isNull = (schema: Json): boolean => resolve(schema)["type"] === "null"

  /** A short type name: `string`, `number`, `object`, `string[]`, `"PENDING" \| "SUCCESS"`, … */
  const typeOf = (raw: Json): string => {
    const named = namedObject(raw)
    if (named !== undefined) return `[${named}](#${anchorOf(named)})`
    const ref = raw["$ref"]
    if (ref === "#/components/schemas/DateTimeUtc") return "string (ISO 8601)"
    const schema = resolve(raw)
    const members = membersOf(schema)
    if (members !== undefined) return [...new Set(members.map(typeOf))].join(" or ")
    const values =
      (schema["enum"] as ReadonlyArray<unknown> | undefined) ??
      ("const" in schema ? [schema["const"]] : undefined)
    if (values !== undefined) return values.map((value) => JSON.stringify(value)).join(", ")
    if (schema["type"] === "array") return `${typeOf((schema["items"] as Json | undefined) ?? {})}[]`
    if (schema["type"] === "object" || schema["properties"] !== undefined) return "object"
    if (typeof schema["type"] === "string") return schema["type"] === "integer" ? "integer" : schema["type"]
    if (Array.isArray(schema["type"])) return (schema["type"] as ReadonlyArray<string>).join(" or ")
    return "any"
  }

  /** What a schema's annotations say beyond its type: Effect Schema's refinement descriptions. */
  const notesOf = (raw: Json): string => {
    const notes: Array<string> = []
    const seen = new Set<string>()
    let schema: Json | undefined = raw
    while (schema !== undefined) {
      const description = schema["description"]
      if (
        typeof description === "string" &&
        !seen.has(description) &&
        !/to be decoded into/.test(description)
      ) {
        seen.add(description)
        notes.push(description)
      }
      const ref: unknown = schema["$ref"]
      schema = typeof ref === "string" ? document.components.schemas[ref.split("/").pop()!] : undefined
    }
    return notes.join("; ")
  }

  /** The fields of an object schema, nested objects and arrays of objects flattened with dots. */
  const fieldsOf = (raw: Json, prefix = "", depth = 0): ReadonlyArray<Field> => {
    const schema = resolve(raw)
    const members = membersOf(schema)
    if (members !== undefined) {
      // `X or null`: the fields of X. Other unions are named by their type only.
      const others = members.filter((member) => !isNull(member))
      return others.length === 1 ? fieldsOf(others[0]!, prefix, depth) : []
    }
    const properties = schema["properties"] as Record<string, Json> | undefined
    if (properties === undefined || depth > 6) return []
    const required = new Set((schema["required"] as ReadonlyArray<string> | undefined) ?? [])
    return Object.entries(properties).flatMap(([name, property]) => {
      const path = `${prefix}${name}`
      const field: Field = {
        path,
        type: typeOf(property),
        required: required.has(name),
        notes: notesOf(property)
      }
      const inner = resolve(property)
      const items = (inner["items"] as Json | undefined) ?? {}
      const isNamed = (schema: Json) =>
        namedObject(schema) !== undefined ||
        (membersOf(schema) ?? []).some((m) => namedObject(m) !== undefined)
      const nested =
        isNamed(property) || (inner["type"] === "array" && isNamed(items))
          ? []
          : inner["type"] === "array"
            ? fieldsOf(items, `${path}[].`, depth + 1)
            : fieldsOf(property, `${path}.`, depth + 1)
      return [field, ...nested]
    })
  }

  /** The object components a schema names, directly or through the components it names. */
  const componentsOf = (raw: unknown, found: Set<string>): Set<string> => {
    if (Array.isArray(raw)) for (const item of raw) componentsOf(item, found)
    else if (raw !== null && typeof raw === "object") {
      const schema = raw as Json
      const named = namedObject(schema)
      if (named !== undefined && !found.has(named)) {
        found.add(named)
        componentsOf(document.components.schemas[named], found)
      }
      for (const value of Object.values(schema)) componentsOf(value, found)
    }
    return found
  }

  return { fieldsOf, typeOf, notesOf, componentsOf, resolve }
}

const fieldTable = (fields: ReadonlyArray<Field>): Array<string> =>
  fields.length === 0
    ? []
    : [
        "| field | type | required | notes |",
        "| --- | --- | --- | --- |",
        ...fields.map(
          (f) => `| \`${cell(f.path)}\` | ${cell(f.type)} | ${f.required ? "yes" : "no"} | ${cell(f.notes)} |`
        ),
        ""
      ]

/** The reference's Markdown text (prettier then formats it like every document of the repository). */
export const renderReference = (document: Document): string => {
  const { componentsOf, fieldsOf, notesOf, resolve, typeOf } = resolver(document)
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation }))
  )
  const tags = (document.tags ?? []).filter((tag) =>
    operations.some((o) => o.operation.tags?.includes(tag.name))
  )
  const headingOf = (o: (typeof operations)[number]) =>
    `${o.method} ${o.path}${o.operation.summary ? ` — ${o.operation.summary}` : ""}`

  /** The success body: an envelope's `data`, or the bare body, as a link or a field table. */
  const successOf = (status: string, schema: Json | undefined): Array<string> => {
    if (schema === undefined) return [`Success: ${status}, no body.`, ""]
    const properties = (schema["properties"] ?? {}) as Record<string, Json>
    const envelope =
      properties["data"] === undefined
        ? undefined
        : properties["code"] !== undefined
          ? "`{message, error: false, code, data}`"
          : properties["status"] !== undefined
            ? '`{status: "success", error: false, data}`'
            : undefined
    const body = envelope === undefined ? schema : properties["data"]!
    const what = envelope === undefined ? "the body" : `the envelope ${envelope} whose \`data\``
    const fields = fieldsOf(body)
    return fields.length === 0
      ? [`Success: ${status}, ${what} is ${typeOf(body)}.`, ""]
      : [`Success: ${status}, ${what} has:`, "", ...fieldTable(fields)]
  }

  const lines: Array<string> = [
    `# API reference`,
    "",
    "<!-- Generated from the OpenAPI document by `npm run openapi`: edit the API definition (packages/http/src/Api.ts), not this file. -->",
    "",
    `${document.info.title} ${document.info.version}. ${document.info.description ?? ""}`,
    "",
    "Every route, its authentication, parameters, request body and success body, generated from the",
    "OpenAPI document the server serves (`/openapi.json`, checked in as [`openapi.json`](openapi.json)).",
    "A running server shows the same interactively at `/docs`.",
    "",
    "- **Bodies** are JSON (`Content-Type: application/json`). An optional field that has no value is",
    "  omitted from answers, never sent as `null`, unless its type below says `null`.",
    "- **Authentication**: `Authorization: Bearer <token>` on every route but the public ones. A user",
    "  token comes from `POST /users/{id}/tokens`; a partner token (`PAR-…`) from `POST /auth/tokens`.",
    "  A token acts on its own account only: another account's resources are not found.",
    "- **Idempotency**: routes that list an `idempotency-key` header replay the first answer to a",
    "  retry with the same key and body (see [decisions](decisions/0012-idempotency-keys.md)).",
    "- **Errors** use the route's envelope with a dotted `message` key; every key, its status and what",
    "  to do: [`errors.md`](errors.md). Webhook events: [`webhooks.md`](webhooks.md).",
    "- **Request ids**: every answer carries a `Request-Id` header (your own `X-Request-Id` when it is",
    "  1 to 128 printable characters without spaces); an error envelope repeats it as `request_id`.",
    "- **Browsers**: only `POST /payments/` and `GET /payments/{paymentId}/public` answer pages from",
    "  other origins, those `COBRO_CORS_ORIGINS` lists ([operations](operations.md#browsers-cors)).",
    ""
  ]

  lines.push("## Routes", "")
  for (const tag of tags) {
    lines.push(`- ${tag.name}`)
    for (const o of operations.filter((o) => o.operation.tags?.includes(tag.name))) {
      lines.push(`  - [${headingOf(o)}](#${anchorOf(headingOf(o))})`)
    }
  }
  lines.push("")

  for (const tag of tags) {
    lines.push(`## ${tag.name}`, "")
    if (tag.description) lines.push(tag.description, "")
    for (const o of operations.filter((o) => o.operation.tags?.includes(tag.name))) {
      const { operation } = o
      lines.push(`### ${headingOf(o)}`, "")
      if (operation.description) lines.push(operation.description, "")
      const isPublic = operation.security !== undefined && operation.security.length === 0
      lines.push(`Authentication: ${isPublic ? "none (public)" : "bearer token"}.`, "")

      for (const where of ["path", "query", "header"] as const) {
        const parameters = (operation.parameters ?? []).filter((p) => p.in === where)
        if (parameters.length === 0) continue
        lines.push(
          `${where === "path" ? "Path" : where === "query" ? "Query" : "Header"} parameters:`,
          "",
          ...fieldTable(
            parameters.map((p) => ({
              path: p.name,
              type: typeOf(p.schema),
              required: p.required === true,
              notes: notesOf(p.schema)
            }))
          )
        )
      }

      const body = operation.requestBody?.content["application/json"]?.schema
      if (body !== undefined) lines.push("Request body:", "", ...fieldTable(fieldsOf(body)))
      const example = operation.requestBody?.content["application/json"]?.example
      if (example !== undefined) lines.push("Example:", "", "```json", JSON.stringify(example), "```", "")

      const success = Object.entries(operation.responses).find(([status]) => status.startsWith("2"))
      if (success !== undefined)
        lines.push(...successOf(success[0], success[1].content?.["application/json"]?.schema))
      const errors = Object.keys(operation.responses).filter((status) => !status.startsWith("2"))
      if (errors.length > 0) lines.push(`Error statuses: ${errors.join(", ")}.`, "")
    }
  }

  lines.push("## Schemas", "", "The objects the routes above name, in alphabetical order.", "")
  // Top-level bodies are expanded where they are used; what they name is listed here.
  const found = new Set<string>()
  for (const { operation } of operations) {
    const success = Object.entries(operation.responses).find(([status]) => status.startsWith("2"))?.[1]
    for (const schema of [
      operation.requestBody?.content["application/json"]?.schema,
      success?.content?.["application/json"]?.schema
    ]) {
      if (schema !== undefined) componentsOf(resolve(schema), found)
    }
  }
  const named = [...found].sort()
  for (const name of named) {
    const schema = document.components.schemas[name]!
    lines.push(`### ${name}`, "")
    const description = schema["description"]
    if (typeof description === "string") lines.push(description, "")
    lines.push(...fieldTable(fieldsOf(schema)))
  }

  // The error statuses, once: every route shares the same list and descriptions.
  const first = operations[0]?.operation.responses ?? {}
  const statuses = Object.entries(first).filter(([status]) => !status.startsWith("2"))
  if (statuses.length > 0) {
    lines.push(
      "## Error statuses",
      "",
      "Every route may answer these. The body is the route's envelope: `{message, error: true, code, data}`,",
      'or `{status: "error", error: true, message, data}` on the partner and account routes; `message`',
      "is the error's key ([`errors.md`](errors.md)) and `data` holds `detail`, and `field` when one",
      "field is at fault.",
      "",
      "| status | when |",
      "| --- | --- |"
    )
    for (const [status, response] of statuses) lines.push(`| ${status} | ${cell(response.description)} |`)
    lines.push("")
  }
  return lines.join("\n")
}
