/**
 * The code the documents show type-checks against the package: the README's walkthrough (step 3)
 * and this package's README example, each compiled as a module beside these tests (not written
 * to disk), with the repository's compiler options.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { firstTsBlock, read } from "./documents.js"

const here = path.dirname(fileURLToPath(import.meta.url))

/** The diagnostics of each source, compiled together as `test/<name>.ts`, by name. */
const typeErrors = (sources: Record<string, string>): Record<string, ReadonlyArray<string>> => {
  const configFile = path.resolve(here, "../tsconfig.json")
  const config = ts.getParsedCommandLineOfConfigFile(
    configFile,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
      }
    }
  )!
  const files = new Map(
    Object.entries(sources).map(([name, source]) => [path.resolve(here, `${name}.ts`), source])
  )
  const options: ts.CompilerOptions = { ...config.options, noEmit: true }
  for (const key of ["composite", "incremental", "declaration", "declarationMap", "emitDeclarationOnly"]) {
    delete options[key]
  }
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, language, ...rest) => {
    const source = files.get(path.resolve(fileName))
    return source === undefined
      ? getSourceFile(fileName, language, ...rest)
      : ts.createSourceFile(fileName, source, language)
  }
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (fileName) => files.has(path.resolve(fileName)) || fileExists(fileName)
  const program = ts.createProgram([...files.keys()], options, host)
  const diagnostics = ts.getPreEmitDiagnostics(program)
  return Object.fromEntries(
    Object.keys(sources).map((name) => [
      name,
      diagnostics
        .filter(
          (d) => d.file === undefined || path.resolve(d.file.fileName) === path.resolve(here, `${name}.ts`)
        )
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    ])
  )
}

describe("the documented client code", () => {
  it("type-checks: the README's walkthrough and the package README's example", () => {
    const walkthrough = firstTsBlock(read("../../../README.md"), "### 3. The same from JavaScript")
    const example = firstTsBlock(read("../README.md"), "npm install @cobro/client")
    expect(walkthrough).toContain('from "@cobro/client"')
    expect(example).toContain('from "@cobro/client"')
    // And a mistake is caught: a method that does not exist.
    const broken = `${walkthrough}\nawait cobro.payPayment(id)\n`
    expect(typeErrors({ __walkthrough__: walkthrough, __example__: example, __broken__: broken })).toEqual({
      __walkthrough__: [],
      __example__: [],
      __broken__: [expect.stringContaining("payPayment")]
    })
  }, 120_000)
})
