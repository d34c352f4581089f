import { defineConfig } from "tsup"
import { packageBuild } from "../../tsup.base.js"

/** The shared build, for browsers as well as Node 20: ES2022 without Node built-ins. */
export default defineConfig({
  ...(packageBuild(["src/index.ts"], { effect: false }) as object),
  target: "es2022",
  platform: "neutral"
})
