/**
 * The checked-in OpenAPI document, `docs/openapi.json`: exactly what a server mounted with
 * `CobroHttp.layer` answers at `GET /openapi.json`, asked for in process (so options given to
 * `middlewareOpenApi` there are reflected too), printed the way the repository's prettier
 * settings print JSON so `prettier --check .` accepts the file as written.
 *
 * `scripts/openapi.ts` writes it (`npm run openapi`); `test/openApiDocument.test.ts` fails when the
 * file no longer matches.
 */
import { Engine } from "@cobro/core"
import * as Prettier from "prettier"
import { fileURLToPath } from "node:url"
import { CobroHttp } from "../src/index.js"
import { referencePath, renderReference } from "./apiReference.js"

export { referencePath }

/** `docs/openapi.json` at the repository root. */
export const documentPath = fileURLToPath(new URL("../../../docs/openapi.json", import.meta.url))

/** The parsed body of `GET /openapi.json`. */
export const served = async (): Promise<unknown> => {
  // The in-memory engine only satisfies the layer's requirements: the document depends on the
  // API definition alone, never on stored data, keys or the clock.
  const { handler, dispose } = CobroHttp.toWebHandler(Engine.layerMemory())
  try {
    const response = await handler(new Request("http://cobro.invalid/openapi.json"))
    if (response.status !== 200) throw new Error(`GET /openapi.json answered ${response.status}`)
    return await response.json()
  } finally {
    await dispose()
  }
}

/** The file's exact text: 2-space JSON as prettier prints it, with a trailing newline. */
export const render = async (): Promise<string> => {
  const options = (await Prettier.resolveConfig(documentPath)) ?? {}
  return Prettier.format(JSON.stringify(await served(), null, 2), { ...options, filepath: documentPath })
}

/** `docs/api.md`'s exact text: the reference rendered from the served document, as prettier prints it. */
export const renderApiReference = async (): Promise<string> => {
  const options = (await Prettier.resolveConfig(referencePath)) ?? {}
  const document = (await served()) as Parameters<typeof renderReference>[0]
  return Prettier.format(renderReference(document), { ...options, filepath: referencePath })
}
