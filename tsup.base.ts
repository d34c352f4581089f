import { defineConfig } from "tsup"

/** The build every package shares (ESM for Node 20, declarations, source maps): each names only its entry points. */
export const packageBuild = (entry: ReadonlyArray<string>) =>
  defineConfig({
    entry: [...entry],
    format: ["esm"],
    dts: { compilerOptions: { composite: false } },
    sourcemap: true,
    clean: true,
    target: "node20"
  })
