/** The documents the client's tests check code in: read beside the tests, and their code blocks. */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))

/** A file's text, by its path relative to this folder. */
export const read = (relative: string) => fs.readFileSync(path.resolve(here, relative), "utf8")

/** The first ```ts block of `text` after the line `after`. */
export const firstTsBlock = (text: string, after: string): string => {
  const block = /```ts\n([\s\S]*?)```/.exec(text.slice(text.indexOf(after)))?.[1]
  if (block === undefined) throw new Error(`no \`\`\`ts block after ${after}`)
  return block
}
