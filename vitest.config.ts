import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@cobro/source"] },
  ssr: { resolve: { conditions: ["@cobro/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    testTimeout: 30_000
  }
})
