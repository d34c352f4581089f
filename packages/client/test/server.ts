/**
 * The real cobro server for the client's tests: `cobro serve` (packages/server/bin/cobro.js, as
 * `npm start` runs it) as a separate process in sandbox mode, on a free port and a SQLite file of
 * its own, with the demo merchant's credentials read from its start banner. Nothing of the
 * server's is imported: the client is tested over HTTP only.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../../server/bin/cobro.js", import.meta.url))

/** Starting node and bundling the server's sources on a busy machine is slow. */
export const START_TIMEOUT = 120_000

export interface RunningServer {
  readonly base: string
  readonly credentials: { readonly userId: string; readonly clientId: string; readonly clientSecret: string }
  readonly output: () => string
  readonly stop: () => Promise<void>
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))

/** Starts `cobro serve` with `env` over a sandbox's defaults; resolves once it listens. */
export const startServer = async (env: Record<string, string> = {}): Promise<RunningServer> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-client-"))
  const child = spawn(process.execPath, [bin, "serve"], {
    cwd: dir,
    env: {
      ...process.env,
      PORT: "0",
      COBRO_DATABASE_URL: path.join(dir, "cobro.db"),
      COBRO_LOG_LEVEL: "warn",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
      await exited(child)
      clearTimeout(timer)
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + START_TIMEOUT
  for (;;) {
    const port = /Listening on http:\/\/localhost:(\d+)/.exec(output)?.[1]
    const clientId = /client_id: +(\S+)/.exec(output)?.[1]
    const clientSecret = /client_secret: +(\S+)/.exec(output)?.[1]
    if (port !== undefined && clientId !== undefined && clientSecret !== undefined) {
      return {
        base: `http://127.0.0.1:${port}`,
        credentials: { userId: "demo", clientId, clientSecret },
        output: () => output,
        stop
      }
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`cobro serve did not start (exit ${child.exitCode}):\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
