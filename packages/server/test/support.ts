/**
 * Test helpers: temporary SQLite files, configuration from a map, the CLI run in process with its
 * output captured, and an in-process server on a random port; and the real `cobro` executable
 * (bin/cobro.js) as separate processes: `cobro serve` started, waited for, stopped or killed, and
 * `cobro <args>` run to completion.
 */
import type { BindSimulator } from "@cobro/bank-bind/testing"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { ConfigProvider, Console, Effect, Exit, Layer, type Scope } from "effect"
import { type ChildProcess, type ExecFileException, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Admin, Cli, Server, ServerConfig } from "../src/index.js"

/** The series of a Prometheus text exposition (`GET /metrics`): `name{labels}` → value. */
export const metricSeries = (text: string): Map<string, number> => {
  const series = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const cut = line.lastIndexOf(" ")
    series.set(line.slice(0, cut), Number(line.slice(cut + 1)))
  }
  return series
}

/** A fresh directory, removed with the scope. */
export const tempDir: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "cobro-server-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

/** The path of a SQLite file (not created yet) in a fresh directory. */
export const tempDb: Effect.Effect<string, never, Scope.Scope> = Effect.map(tempDir, (dir) =>
  path.join(dir, "data", "cobro.db")
)

export type Env = Readonly<Record<string, string>>

/** The settings that put a server or a command on BIND, reaching `sim` (`COBRO_BANK=bind`). */
export const bindEnv = (sim: BindSimulator.Simulator): Env => ({
  COBRO_BANK: "bind",
  COBRO_BIND_BASE_URL: sim.url,
  COBRO_BIND_TOKEN_URL: sim.tokenUrl,
  COBRO_BIND_CLIENT_ID: sim.clientId,
  COBRO_BIND_CLIENT_SECRET: sim.clientSecret,
  COBRO_BIND_CUIT: sim.entity.cuit
})

export const provider = (env: Env) => ConfigProvider.fromMap(new Map(Object.entries(env)))

/** The server configuration `env` gives. */
export const configOf = (
  env: Env
): Effect.Effect<ServerConfig.ServerConfig, ServerConfig.ServerConfigError> =>
  Effect.withConfigProvider(ServerConfig.load, provider(env))

export interface CliResult {
  readonly exit: Exit.Exit<void, unknown>
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `cobro <args>` in process with `env` as its environment; output captured. `stdin`: what the
 * command reads from standard input (`--password-stdin`).
 */
export const cli = (args: ReadonlyArray<string>, env: Env, stdin?: string): Effect.Effect<CliResult> =>
  Effect.gen(function* () {
    const out: Array<string> = []
    const err: Array<string> = []
    const base = yield* Console.consoleWith(Effect.succeed)
    const captured: Console.Console = {
      ...base,
      log: (...parts: ReadonlyArray<unknown>) =>
        Effect.sync(() => void out.push(parts.map(String).join(" "))),
      error: (...parts: ReadonlyArray<unknown>) =>
        Effect.sync(() => void err.push(parts.map(String).join(" ")))
    }
    const exit = yield* Cli.run(["node", "cobro", ...args]).pipe(
      Effect.provide(NodeContext.layer),
      Effect.withConfigProvider(provider(env)),
      Effect.withConsole(captured),
      stdin === undefined ? (e) => e : Effect.provideService(Cli.Stdin, { read: Effect.succeed(stdin) }),
      Effect.exit
    )
    return { exit, stdout: out.join("\n"), stderr: err.join("\n") }
  })

/** `cobro <args> --json` that must succeed; its output parsed. */
export const cliJson = (args: ReadonlyArray<string>, env: Env, stdin?: string) =>
  Effect.flatMap(cli([...args, "--json"], env, stdin), (result) =>
    Exit.isSuccess(result.exit)
      ? Effect.succeed(JSON.parse(result.stdout) as Record<string, unknown>)
      : Effect.dieMessage(`cobro ${args.join(" ")} failed: ${result.stderr}\n${String(result.exit)}`)
  )

/** The failure message the `cobro` executable would print for a failed run. */
export const failureOf = (result: CliResult): string =>
  Exit.isFailure(result.exit)
    ? Cli.describeFailure(result.exit.cause).pipe((o) => (o._tag === "Some" ? o.value : "(nothing printed)"))
    : "(succeeded)"

/**
 * The whole server of `config` on a random port, with an `HttpClient` whose requests go to it
 * (relative URLs).
 */
export const serverLayer = (config: ServerConfig.ServerConfig) =>
  HttpServer.layerTestClient.pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provideMerge(Server.layer(config, 0))
  )

/**
 * Inside `serverLayer`: the demo merchant, created now, and the server's base URL
 * (`http://127.0.0.1:<port>`).
 */
export interface DemoServer {
  readonly base: string
  readonly credentials: { readonly userId: string; readonly clientId: string; readonly clientSecret: string }
}

export const demoServer: Effect.Effect<
  DemoServer,
  Effect.Effect.Error<ReturnType<typeof Admin.ensureDemo>>,
  Effect.Effect.Context<ReturnType<typeof Admin.ensureDemo>> | HttpServer.HttpServer
> = Effect.gen(function* () {
  const demo = yield* Admin.ensureDemo()
  if (demo._tag !== "Created") throw new Error(`demo merchant not created: ${demo._tag}`)
  const server = yield* HttpServer.HttpServer
  if (server.address._tag !== "TcpAddress") throw new Error("not on TCP")
  return {
    base: `http://127.0.0.1:${server.address.port}`,
    credentials: { userId: demo.user_id, clientId: demo.client_id, clientSecret: demo.client_secret }
  }
})

/** Headless Chromium's flags on this kind of machine (Debian's `/usr/bin/chromium`). */
export const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run"
]

/** A request to the test server: status, headers and parsed JSON body. */
export const request = (req: HttpClientRequest.HttpClientRequest) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(req)
    const text = yield* response.text
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return {
      status: response.status,
      headers: response.headers,
      body: body as Record<string, unknown>
    } as const
  })

export const postJson = (url: string, body: unknown, token?: string) =>
  request(
    HttpClientRequest.post(url).pipe(
      HttpClientRequest.bodyUnsafeJson(body),
      token === undefined ? (r) => r : HttpClientRequest.bearerToken(token)
    )
  )

export const get = (url: string, token?: string) =>
  request(
    HttpClientRequest.get(url).pipe(token === undefined ? (r) => r : HttpClientRequest.bearerToken(token))
  )

// --- the `cobro` executable as separate processes -----------------------------------------------

const bin = fileURLToPath(new URL("../bin/cobro.js", import.meta.url))

/** Starting node and bundling the sources on a busy machine is slow; waits are generous but finite. */
export const START_TIMEOUT = 90_000

/** How long a `cobro <args>` process may run before it is killed with SIGKILL. */
const CLI_TIMEOUT = 90_000

export interface CobroProcess {
  readonly child: ChildProcess
  /** stdout and stderr, interleaved as they arrived. */
  readonly output: () => string
  readonly stdout: () => string
  readonly stderr: () => string
}

/** Spawns `cobro <args>` in `cwd`, with `env` over this process's environment; output collected. */
export const spawnCobro = (args: ReadonlyArray<string>, env: Env, cwd: string): CobroProcess => {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk: Buffer) => {
    const text = chunk.toString()
    stdout += text
    out += text
  })
  child.stderr!.on("data", (chunk: Buffer) => {
    const text = chunk.toString()
    stderr += text
    out += text
  })
  return { child, output: () => out, stdout: () => stdout, stderr: () => stderr }
}

/**
 * The port of `cobro serve` once it prints `Listening on http://localhost:<port>`. When the process
 * exits first or `timeout` ms pass: `cleanup`, then a failure with the output.
 */
export const listeningPort = async (
  running: CobroProcess,
  timeout: number,
  cleanup: () => void | Promise<void>
): Promise<number> => {
  const deadline = Date.now() + timeout
  for (;;) {
    const port = /Listening on http:\/\/localhost:(\d+)/.exec(running.output())?.[1]
    if (port !== undefined) return Number(port)
    if (running.child.exitCode !== null || Date.now() > deadline) {
      await cleanup()
      throw new Error(`cobro serve did not start (exit ${running.child.exitCode}):\n${running.output()}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

/** Resolves once `child` has exited (at once if it already has). */
const exited = (child: ChildProcess): Promise<void> =>
  hasExited(child) ? Promise.resolve() : new Promise<void>((resolve) => child.once("exit", () => resolve()))

/** SIGKILL, and its exit. */
export const kill9 = async (running: { readonly child: ChildProcess }): Promise<void> => {
  running.child.kill("SIGKILL")
  await exited(running.child)
}

/** SIGTERM, then SIGKILL if it has not exited within 20 s; resolves once it has exited. */
export const stop = async (running: { readonly child: ChildProcess }): Promise<void> => {
  const { child } = running
  if (hasExited(child)) return
  child.kill("SIGTERM")
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
  await exited(child)
  clearTimeout(timer)
}

export interface CobroResult {
  /** 0 on success, else the exit code (1 when there is none: killed by a signal). */
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly error: ExecFileException | null
}

/** Runs `cobro <args>` to completion with `env` over this process's environment; never rejects. */
export const execCobro = (args: ReadonlyArray<string>, env: Env): Promise<CobroResult> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...process.env, ...env }, timeout: CLI_TIMEOUT, killSignal: "SIGKILL" },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr, error })
    )
  })

/** `cobro <args> --json` as a process that must succeed; what it prints, parsed. */
export const execCobroJson = async <A = Record<string, unknown>>(
  args: ReadonlyArray<string>,
  env: Env
): Promise<A> => {
  const result = await execCobro([...args, "--json"], env)
  if (result.error !== null)
    throw new Error(`cobro ${args.join(" ")} failed: ${result.error.message}\n${result.stderr}`)
  try {
    return JSON.parse(result.stdout) as A
  } catch {
    throw new Error(`cobro ${args.join(" ")} printed no JSON:\n${result.stdout}\n${result.stderr}`)
  }
}

/** A webhook receiver on a random loopback port that answers 200; the bodies it received. */
export const webhookReceiver = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ url: string; received: Array<string>; server: http.Server }>((resolve) => {
        const received: Array<string> = []
        const server = http.createServer((req, res) => {
          let body = ""
          req.on("data", (chunk: Buffer) => (body += chunk.toString()))
          req.on("end", () => {
            received.push(body)
            res.writeHead(200).end()
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({ url: `http://127.0.0.1:${port}/hook`, received, server })
        })
      })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)
