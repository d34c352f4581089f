/**
 * The check each built entry point of a package that imports `effect` runs before it loads any
 * module that does: the registry's `latest` of `effect` is 4.x, and a host that installed it
 * would otherwise fail while Node links the modules (`ERR_MODULE_NOT_FOUND …/effect/dist/…`,
 * "does not provide an export named …"), before any code of ours runs. The build
 * (`tsup.base.ts`) makes each entry point a small module that awaits this check and then imports
 * the bundle dynamically (docs/decisions/0063-effect-3-check.md).
 *
 * No imports: this module is bundled on its own into every package, and must load whatever
 * `effect` is installed.
 */

/** What the check reads of `effect/package.json`. */
export interface EffectManifest {
  readonly version?: unknown
}

/** A caret range's lower bound (`^3.22.4`), or undefined for any other form of range. */
const caret = (range: string): ReadonlyArray<number> | undefined => {
  const match = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range.trim())
  return match === null ? undefined : match.slice(1).map(Number)
}

/** Whether `version` (`3.22.4`, `4.0.0-rc.1`) satisfies the caret range `range`. */
export const satisfiesCaret = (version: string, range: string): boolean => {
  const floor = caret(range)
  const match = /^(\d+)\.(\d+)\.(\d+)(-.*)?$/.exec(version.trim())
  if (floor === undefined || match === null) return false
  const [major, minor, patch] = match.slice(1, 4).map(Number) as [number, number, number]
  const [floorMajor, floorMinor, floorPatch] = floor as [number, number, number]
  // A prerelease satisfies no range here: npm takes none for a range without a prerelease tag.
  if (match[4] !== undefined || major !== floorMajor) return false
  return major > 0
    ? minor > floorMinor || (minor === floorMinor && patch >= floorPatch)
    : minor === floorMinor && patch >= floorPatch
}

/**
 * The sentence that says what is wrong with the `effect` found (its manifest, or undefined when
 * none was found) and what to install, or undefined when it satisfies `range`.
 */
export const effectMismatch = (
  options: {
    /** The package that checks (`@cobro/core`). */
    readonly name: string
    /** Its range of `effect` (`^3.22.4`). */
    readonly range: string
    /** The command that installs what it needs (`npm install effect@^3.22 …`). */
    readonly install: string
  },
  found: EffectManifest | undefined
): string | undefined => {
  const version = typeof found?.version === "string" ? found.version : undefined
  if (version !== undefined && satisfiesCaret(version, options.range)) return undefined
  const what = version === undefined ? "cannot find it" : `found effect ${version}`
  return `${options.name} needs effect ${options.range} (Effect 3) but ${what}: install the Effect 3 line with \`${options.install}\`.`
}

/**
 * Reads the manifest of the `effect` the package resolves (`load` imports `effect/package.json`
 * from the package's own directory) and throws the sentence of `effectMismatch` when it does not
 * fit. When the manifest cannot be read for another reason than a missing `effect` (a runtime
 * without JSON imports), nothing is checked: the package loads as it would without the check.
 */
export const requireEffect = async (
  options: Parameters<typeof effectMismatch>[0],
  load: () => Promise<{ readonly default: EffectManifest }>
): Promise<void> => {
  let found: EffectManifest | undefined
  try {
    found = (await load()).default
  } catch (error) {
    const code = (error as { readonly code?: unknown } | null)?.code
    if (code !== "ERR_MODULE_NOT_FOUND") return
    found = undefined
  }
  const sentence = effectMismatch(options, found)
  if (sentence === undefined) return
  const error = new Error(sentence)
  // The sentence is the whole story: the frames would only name this module.
  error.stack = `Error: ${sentence}`
  throw error
}
