/**
 * Corrections to the OpenAPI document `HttpApi` generates, so it describes what the server sends.
 *
 * `HttpApi` documents its default `HttpApiDecodeError` body on every 400, but this server never
 * sends it: the boundary turns every decode failure into the route's `ApiError` envelope. The
 * document is rewritten to drop it (and the components only it used), to merge the identical
 * schemas a status gets from both the route and its authentication middleware, and to describe
 * each error response with its own schema's description.
 *
 * Every response lists the `Request-Id` header the server adds to every answer (`RequestId.ts`).
 *
 * Two more, for the interactive reference (`/docs`): groups that share a title (the public and the
 * authenticated payment routes are both "Payments") become one tag, and each request body carries
 * its schema's first example (`withExample` in `Api.ts`) as the body's `example`, which is what the
 * reference shows and its "Try it" sends.
 */

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const DECODE_ERROR = "#/components/schemas/HttpApiDecodeError"
const COMPONENT = /"#\/components\/schemas\/([^"]+)"/g

const refsIn = (value: unknown): Array<string> =>
  [...JSON.stringify(value).matchAll(COMPONENT)].map((m) => decodeURIComponent(m[1]!))

/** A response schema without the decode error and without repeated members. */
const cleanSchema = (schema: unknown): unknown => {
  if (!isObject(schema) || !Array.isArray(schema["anyOf"])) return schema
  const seen = new Set<string>()
  const members = (schema["anyOf"] as Array<unknown>).filter((member) => {
    if (isObject(member) && member["$ref"] === DECODE_ERROR) return false
    const key = JSON.stringify(member)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  return members.length === 1 ? members[0] : { ...schema, anyOf: members }
}

/** The description of the component a schema refers to, if it is a single reference. */
const describedBy = (schema: unknown, components: Json): string | undefined => {
  if (!isObject(schema) || typeof schema["$ref"] !== "string") return undefined
  const name = schema["$ref"].split("/").pop()!
  const component = components[name]
  return isObject(component) && typeof component["description"] === "string"
    ? component["description"]
    : undefined
}

/** The tags with those of the same name merged (their descriptions joined), in first-seen order. */
const mergeTags = (tags: unknown): unknown => {
  if (!Array.isArray(tags)) return tags
  const byName = new Map<string, Json>()
  for (const tag of tags) {
    if (!isObject(tag) || typeof tag["name"] !== "string") continue
    const seen = byName.get(tag["name"])
    if (seen === undefined) {
      byName.set(tag["name"], tag)
      continue
    }
    const descriptions = [seen["description"], tag["description"]].filter((d) => typeof d === "string")
    byName.set(
      tag["name"],
      descriptions.length > 0 ? { ...seen, description: descriptions.join("\n\n") } : seen
    )
  }
  return [...byName.values()]
}

/** The JSON request body with its schema's first example as `example` (a `$ref` is followed). */
const withBodyExample = (requestBody: unknown, components: Json): unknown => {
  if (!isObject(requestBody) || !isObject(requestBody["content"])) return requestBody
  const media = requestBody["content"]["application/json"]
  if (!isObject(media) || media["example"] !== undefined) return requestBody
  const schema = media["schema"]
  const target =
    isObject(schema) && typeof schema["$ref"] === "string"
      ? components[schema["$ref"].split("/").pop()!]
      : schema
  const examples = isObject(target) ? target["examples"] : undefined
  if (!Array.isArray(examples) || examples.length === 0) return requestBody
  return {
    ...requestBody,
    content: { ...requestBody["content"], "application/json": { ...media, example: examples[0] } }
  }
}

/** The `Request-Id` answer header, a component every response refers to. */
const requestIdHeader: Json = {
  RequestId: {
    description:
      "The request's id: the caller's `X-Request-Id` when it is 1 to 128 printable ASCII characters without spaces, else a new `req_…`. The server's log lines of the request and an error envelope's `request_id` carry it; quote it to support.",
    schema: { type: "string", minLength: 1, maxLength: 128 }
  }
}

const withRequestId = (response: unknown): unknown =>
  isObject(response)
    ? {
        ...response,
        headers: {
          ...(isObject(response["headers"]) ? response["headers"] : {}),
          "Request-Id": { $ref: "#/components/headers/RequestId" }
        }
      }
    : response

export const transform = (spec: Record<string, unknown>): Record<string, unknown> => {
  const components = isObject(spec["components"]) ? spec["components"] : {}
  const schemas: Json = isObject(components["schemas"]) ? { ...components["schemas"] } : {}
  const paths: Json = {}
  for (const [path, item] of Object.entries(isObject(spec["paths"]) ? spec["paths"] : {})) {
    const operations: Json = {}
    for (const [method, operation] of Object.entries(isObject(item) ? item : {})) {
      if (!isObject(operation) || !isObject(operation["responses"])) {
        operations[method] = operation
        continue
      }
      const responses: Json = {}
      for (const [status, response] of Object.entries(operation["responses"])) {
        const json = isObject(response) && isObject(response["content"]) ? response["content"] : undefined
        const media =
          json !== undefined && isObject(json["application/json"]) ? json["application/json"] : undefined
        if (!isObject(response) || media === undefined || Number(status) < 400) {
          responses[status] = withRequestId(response)
          continue
        }
        const schema = cleanSchema(media["schema"])
        const description = describedBy(schema, schemas) ?? response["description"]
        responses[status] = withRequestId({
          ...response,
          description,
          content: { ...json, "application/json": { ...media, schema } }
        })
      }
      operations[method] =
        operation["requestBody"] === undefined
          ? { ...operation, responses }
          : { ...operation, responses, requestBody: withBodyExample(operation["requestBody"], schemas) }
    }
    paths[path] = operations
  }
  // Keep only the components something still refers to.
  const reachable = new Set<string>()
  const queue = refsIn(paths)
  while (queue.length > 0) {
    const name = queue.pop()!
    if (reachable.has(name)) continue
    reachable.add(name)
    queue.push(...refsIn(schemas[name]))
  }
  for (const name of Object.keys(schemas)) if (!reachable.has(name)) delete schemas[name]
  const headers = { ...(isObject(components["headers"]) ? components["headers"] : {}), ...requestIdHeader }
  return {
    ...spec,
    tags: mergeTags(spec["tags"]),
    paths,
    components: { ...components, schemas, headers }
  }
}
