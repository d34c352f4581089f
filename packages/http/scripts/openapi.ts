/**
 * Writes `docs/openapi.json`, the document the server serves at `/openapi.json`:
 *
 *   npm run openapi
 *
 * Run it after changing a route, a schema or an annotation of `CobroApi`;
 * `test/openApiDocument.test.ts` fails until the file is regenerated.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { documentPath, render } from "./openApiDocument.js"

const text = await render()
const before = await fs.readFile(documentPath, "utf8").catch(() => undefined)
const where = path.relative(process.cwd(), documentPath)
if (before === text) {
  console.log(`${where} is up to date`)
} else {
  await fs.writeFile(documentPath, text)
  const paths = Object.keys((JSON.parse(text) as { paths: object }).paths).length
  console.log(`wrote ${where} (${paths} paths, ${text.length} bytes)`)
}
