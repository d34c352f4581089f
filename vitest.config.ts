import { defineConfig } from "vitest/config"

/**
 * The packages whose test files share one module graph (project `shared`): importing a file's
 * modules (the sources through vite, Effect) is most of what a small test file costs, and these
 * files leave no process-wide state behind that another reads (no environment, no global fetch,
 * no metrics read back). The others (project `isolated`: core, webhooks, client, server and the
 * examples) keep a fresh module graph per file: the server's tests read process-wide metrics and
 * spawn `cobro` processes, and a few tests of core, webhooks and client fail after some other
 * file ran in the same worker (docs/decisions/0095-fast-suite.md).
 */
const shared = ["bank-bind", "bank-sandbox", "http", "sql", "storage-contract"]
const testsOf = (dirs: ReadonlyArray<string>) => dirs.map((dir) => `${dir}/test/**/*.test.ts`)
const sharedFiles = testsOf(shared.map((p) => `packages/${p}`))

export default defineConfig({
  resolve: { conditions: ["@cobro/source"] },
  ssr: { resolve: { conditions: ["@cobro/source"] } },
  test: {
    testTimeout: 30_000,
    // The isolated files in three forked processes, one file each (vitest's default is one fewer
    // than the cores: one on the 2-core machines the suite runs on). Many files mostly wait
    // (servers they spawn, real-time leases, npm, the bank simulator), so a third worker overlaps
    // those waits with another file's CPU. `--maxWorkers=N` overrides it
    // (docs/decisions/0080-parallel-test-suite.md).
    maxWorkers: 3,
    minWorkers: 1,
    // Vitest 3 builds one pool per kind from the root's options (a project's `isolate` does not
    // reach the forks pool): the shared files run one after another in one worker thread that
    // keeps its modules, beside the forks. (Several non-isolated threads are recycled while their
    // files still run.)
    poolOptions: { forks: { isolate: true }, threads: { isolate: false } },
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: sharedFiles,
          pool: "threads",
          isolate: false,
          poolOptions: { threads: { singleThread: true, isolate: false } }
        }
      },
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
