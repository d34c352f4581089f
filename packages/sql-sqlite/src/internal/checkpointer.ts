/**
 * WAL checkpoints off the event loop. better-sqlite3 answers on the calling thread, so SQLite's
 * automatic checkpoint (run by the committing connection once the WAL holds
 * `wal_autocheckpoint` pages) copies those pages into the database file and syncs it inside a
 * request's commit: measured at 25–50 ms every second or so under load, the tail of every
 * latency (bench/results.md). A worker thread with its own connection to the file runs
 * `PRAGMA wal_checkpoint(PASSIVE)` every `everyMillis` instead: it copies what is committed,
 * never waits for the server's connection and never makes it wait.
 *
 * The server's connection keeps an automatic checkpoint at `backstopPages` (docs/decisions.md):
 * a WAL starts over only when a writer finds every frame copied, and a passive checkpoint that
 * overlaps a commit leaves that commit's frames behind, so under unbroken writes the WAL could
 * otherwise grow without end. By the time the backstop runs the worker has copied nearly all of
 * it, so the backstop's own copy is short.
 */
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import { Effect, Layer, Runtime } from "effect"

export interface Options {
  readonly filename: string
  /** How often the worker checkpoints, in milliseconds. */
  readonly everyMillis: number
}

/**
 * The worker's program, plain CommonJS (`eval`): it needs no build step of its own in a source
 * checkout, a bundle or the published package. It reports failures; a checkpoint that could not
 * copy everything (a reader on an older snapshot) is no failure, the next one goes on.
 */
const program = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const said = (error) => String((error && error.message) || error)
let db
try {
  db = new Database(workerData.filename, { fileMustExist: true })
} catch (error) {
  parentPort.postMessage({ failed: "open", message: said(error) })
}
let failing = false
const timer = db === undefined ? undefined : setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)")
    failing = false
  } catch (error) {
    // Said once a run of failures, not every tick.
    if (!failing) parentPort.postMessage({ failed: "checkpoint", message: said(error) })
    failing = true
  }
}, workerData.everyMillis)
parentPort.once("message", () => {
  clearInterval(timer)
  if (db !== undefined) db.close()
  parentPort.close()
})
`

/** better-sqlite3 as `@effect/sql-sqlite-node` resolves it, so both connections use one copy. */
const driver = () =>
  createRequire(createRequire(import.meta.url).resolve("@effect/sql-sqlite-node")).resolve("better-sqlite3")

/**
 * The checkpointing worker for the layer's lifetime. Built after the SQLite client, it is stopped
 * (its connection closed) before the client closes, so the client's is the last connection out.
 */
export const layer = (options: Options): Layer.Layer<never> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<never>()
      const report = Runtime.runFork(runtime)
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          const worker = new Worker(program, {
            eval: true,
            workerData: { driver: driver(), filename: options.filename, everyMillis: options.everyMillis }
          })
          const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()))
          worker.on("message", (m: { readonly failed: "open" | "checkpoint"; readonly message: string }) =>
            report(
              Effect.logWarning(
                m.failed === "open"
                  ? `SQLite checkpoints: the worker could not open ${options.filename}; the server's connection checkpoints alone`
                  : "SQLite checkpoints: a checkpoint failed; the worker tries again",
                m.message
              )
            )
          )
          worker.on("error", (error) =>
            report(
              Effect.logWarning(
                "SQLite checkpoints: the worker stopped; the server's connection checkpoints alone",
                error
              )
            )
          )
          // It must not hold the process open: a server that stops closes it first.
          worker.unref()
          return { worker, exited }
        }),
        ({ exited, worker }) =>
          Effect.promise(() => {
            // Asks it to close its connection and end; a worker that already ended ignores it.
            worker.postMessage("stop")
            return exited
          })
      )
    })
  )
