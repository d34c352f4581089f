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
import { Layer } from "effect"
import * as Prettier from "prettier"
import { fileURLToPath } from "node:url"
import { CobroHttp } from "../src/index.js"
import { SandboxAccounts, SandboxClocks, SandboxEngine } from "@cobro/bank-sandbox"
import { referencePath, renderReference } from "./apiReference.js"

export { referencePath }

/** `docs/openapi.json` at the repository root. */
export const documentPath = fileURLToPath(new URL("../../../docs/openapi.json", import.meta.url))

/**
 * A sandbox engine in memory with every sandbox service (the faucet, the sandbox bank's accounts,
 * the test clocks): the document lists the routes of the services it finds.
 */
const sandboxEngine = () => {
  const storage = SandboxClocks.layerWith({ refreshEvery: undefined }).pipe(
    Layer.provideMerge(Engine.layerMemoryStorage)
  )
  return Layer.mergeAll(SandboxAccounts.layerMemory, SandboxClocks.testClocks).pipe(
    Layer.provideMerge(SandboxEngine.layerSandbox(storage)),
    Layer.provideMerge(storage)
  )
}

/** The parsed body of `GET /openapi.json` of a sandbox server (every route). */
export const served = async (): Promise<unknown> => {
  // The in-memory engine only satisfies the layer's requirements: the document depends on the
  // API definition and on which sandbox services there are, never on stored data, keys or the clock.
  const { handler, dispose } = CobroHttp.toWebHandler(sandboxEngine())
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
