/**
 * Which operation of the OpenAPI document a request is: the generated table matched on method and
 * path (relative to the client's base URL, which may carry a prefix such as `/api/cobro`).
 */
import { type Operation, operations } from "../generated/operations.js"

interface Compiled extends Operation {
  readonly pattern: RegExp
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const compiled: ReadonlyArray<Compiled> = operations.map((operation) => ({
  ...operation,
  pattern: new RegExp(
    "^" +
      operation.path
        .split(/(\{[^}]+\})/)
        .map((part) => (part.startsWith("{") ? "[^/]+" : escape(part)))
        .join("") +
      "$"
  )
}))

/** The operation of `method` on `pathname`, `basePath` removed; undefined when the document has none. */
export const operationOf = (method: string, pathname: string, basePath: string): Operation | undefined => {
  const base = basePath.replace(/\/+$/, "")
  const path = base !== "" && pathname.startsWith(base) ? pathname.slice(base.length) : pathname
  return compiled.find((o) => o.method === method && o.pattern.test(path))
}
