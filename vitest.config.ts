import { defineConfig } from "vitest/config"

/**
 * The packages whose test files share their workers' modules (`isolate: false`): importing a
 * file's module graph (the sources through vite, Effect) is most of what a small test file costs,
 * and these files hold no process-wide state between them (no metrics read back, no environment,
 * no global fetch, no test clock left behind). Their files ran in one another's workers, in any
 * order, before they were listed here. The others (core, webhooks, client, server and the
 * examples) keep a fresh module graph per file: the server's tests read process-wide metrics and
 * spawn `cobro` processes, and a few tests of core, webhooks and client fail after some other
 * file ran in the same worker (docs/decisions/suite-fast-suite.md).
 */
const shared = ["bank-bind", "bank-sandbox", "http", "sql", "storage-contract"]
const testsOf = (dirs: ReadonlyArray<string>) => dirs.map((dir) => `${dir}/test/**/*.test.ts`)
const sharedFiles = testsOf(shared.map((p) => `packages/${p}`))

export default defineConfig({
  resolve: { conditions: ["@cobro/source"] },
  ssr: { resolve: { conditions: ["@cobro/source"] } },
  test: {
    testTimeout: 30_000,
    // Test files in three worker processes (vitest's default is one fewer than the cores: one on
    // the 2-core machines the suite runs on). Many files mostly wait (servers they spawn, real-time
    // leases, npm, the bank simulator), so a third worker overlaps those waits with another file's
    // CPU. `--maxWorkers=N` overrides it (docs/decisions/0080-parallel-test-suite.md).
    maxWorkers: 3,
    minWorkers: 1,
    projects: [
      { extends: true, test: { name: "shared", include: sharedFiles, isolate: false } },
      {
        extends: true,
        test: {
          name: "isolated",
          include: testsOf(["packages/*", "examples/*"]),
          exclude: [...sharedFiles, "**/node_modules/**"]
        }
      }
    ]
  }
})
