/**
 * Writes the client's generated sources from the OpenAPI document (`docs/openapi.json`):
 *
 *   npm run generate -w @cobro/client
 *
 * - `src/generated/openapi.ts`: the types of every route, request and answer (openapi-typescript);
 * - `src/generated/operations.ts`: per route, whether it needs a bearer token and whether it takes
 *   an `Idempotency-Key` (what the client's retries and token handling go by).
 *
 * The root's `npm run openapi` runs it after writing the document; `test/generated.test.ts` fails
 * until both files are regenerated.
 */
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as prettier from "prettier"

const here = path.dirname(fileURLToPath(import.meta.url))
export const documentPath = path.resolve(here, "../../../docs/openapi.json")
export const typesPath = path.resolve(here, "../src/generated/openapi.ts")
export const operationsPath = path.resolve(here, "../src/generated/operations.ts")

interface Operation {
  readonly operationId?: string
  readonly security?: ReadonlyArray<Record<string, unknown>>
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string }>
}

interface Document {
  readonly security?: ReadonlyArray<Record<string, unknown>>
  readonly paths: Record<string, Record<string, Operation>>
}

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

const format = async (file: string, text: string) =>
  prettier.format(text, { ...(await prettier.resolveConfig(file)), filepath: file })

/** The generated files' text, by path. */
export const generate = async (): Promise<ReadonlyArray<readonly [file: string, text: string]>> => {
  const text = await fs.readFile(documentPath, "utf8")
  const document = JSON.parse(text) as Document
  const types = COMMENT_HEADER + astToString(await openapiTS(document as never, { silent: true }))
  const rows = Object.entries(document.paths).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([method]) => methods.includes(method))
      .map(([method, operation]) => {
        const security = operation.security ?? document.security ?? []
        return {
          method: method.toUpperCase(),
          path: template,
          operationId: operation.operationId ?? `${method} ${template}`,
          bearer: security.some((requirement) => "bearer" in requirement),
          idempotencyKey: (operation.parameters ?? []).some(
            (p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key"
          )
        }
      })
  )
  const operations = `${COMMENT_HEADER}/**
 * Every operation of the API: whether it needs a bearer token (\`bearer\`) and whether it takes an
 * \`Idempotency-Key\` header, so that a retry of it never acts twice (\`idempotencyKey\`).
 */
export interface Operation {
  readonly method: string
  readonly path: string
  readonly operationId: string
  readonly bearer: boolean
  readonly idempotencyKey: boolean
}

export const operations: ReadonlyArray<Operation> = ${JSON.stringify(rows)}
`
  return [
    [typesPath, await format(typesPath, types)],
    [operationsPath, await format(operationsPath, operations)]
  ]
}

const isMain =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)

if (isMain) {
  for (const [file, text] of await generate()) {
    const before = await fs.readFile(file, "utf8").catch(() => undefined)
    const where = path.relative(process.cwd(), file)
    if (before === text) {
      console.log(`${where} is up to date`)
    } else {
      await fs.mkdir(path.dirname(file), { recursive: true })
      await fs.writeFile(file, text)
      console.log(`wrote ${where} (${text.length} bytes)`)
    }
  }
}
