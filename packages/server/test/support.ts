/**
 * Test helpers: temporary SQLite files, configuration from a map, the CLI run in process with its
 * output captured, and an in-process server on a random port.
 */
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { NodeContext, NodeHttpServer } from "@effect/platform-node"
import { ConfigProvider, Console, Effect, Exit, Layer, type Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Cli, Server, ServerConfig } from "../src/index.js"

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

/** Runs `cobro <args>` in process with `env` as its environment; output captured. */
export const cli = (args: ReadonlyArray<string>, env: Env): Effect.Effect<CliResult> =>
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
      Effect.exit
    )
    return { exit, stdout: out.join("\n"), stderr: err.join("\n") }
  })

/** `cobro <args> --json` that must succeed; its output parsed. */
export const cliJson = (args: ReadonlyArray<string>, env: Env) =>
  Effect.flatMap(cli([...args, "--json"], env), (result) =>
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
    Layer.provideMerge(Server.layerWith(config, NodeHttpServer.layerTest))
  )

/** A request to the test server: status and parsed JSON body. */
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
    return { status: response.status, body: body as Record<string, unknown> } as const
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
