/**
 * Writes `docs/openapi.json`, the document the server serves at `/openapi.json`, and `docs/api.md`,
 * the API reference rendered from it:
 *
 *   npm run openapi
 *
 * Run it after changing a route, a schema or an annotation of `CobroApi`;
 * `test/openApiDocument.test.ts` fails until both files are regenerated.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { documentPath, referencePath, render, renderApiReference } from "./openApiDocument.js"

const write = async (file: string, text: string) => {
  const before = await fs.readFile(file, "utf8").catch(() => undefined)
  const where = path.relative(process.cwd(), file)
  if (before === text) {
    console.log(`${where} is up to date`)
  } else {
    await fs.writeFile(file, text)
    console.log(`wrote ${where} (${text.length} bytes)`)
  }
}

await write(documentPath, await render())
await write(referencePath, await renderApiReference())
