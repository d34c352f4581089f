import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@cobro/source"] },
  ssr: { resolve: { conditions: ["@cobro/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    // Test files in three worker processes (vitest's default is one fewer than the cores: one on
    // the 2-core machines the suite runs on). Many files mostly wait (servers they spawn, real-time
    // leases, npm, the bank simulator), so a third worker overlaps those waits with another file's
    // CPU. `--maxWorkers=N` overrides it (docs/decisions/0080-parallel-test-suite.md).
    maxWorkers: 3,
    minWorkers: 1
  }
})
