/**
 * The packages as a consumer gets them. Every publishable package of the workspace is built with
 * its tsup config and packed (`npm pack`), the tarballs are installed with `npm install` into a
 * fresh project under the system's temporary folder (outside the workspace, so nothing resolves
 * to the sources), and a small host there is type-checked against the packed declarations and
 * run: a merchant and a payment on the in-memory sandbox engine, the same payment read back
 * through `@cobro/http`'s fetch handler and through `@cobro/client` over that handler, and a
 * webhook signature checked with `@cobro/webhooks`.
 *
 * Nothing in the work tree is written: each package is built into a staging copy under the
 * temporary folder. `effect`, `@types/node` and the packages' dependencies come from the npm
 * registry (from npm's cache when it has them). Without a registry the test is skipped with a
 * warning, except under CI (`CI` set), where it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const require = createRequire(import.meta.url)
const tsc = require.resolve("typescript/bin/tsc")
const tsup = path.join(root, "node_modules", "tsup", "dist", "cli-default.js")
const npm = process.platform === "win32" ? "npm.cmd" : "npm"

const minutes = (n: number) => n * 60_000

interface Run {
  readonly stdout: string
  readonly stderr: string
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string, timeout = minutes(5)): Promise<Run> =>
  new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      // `npm_config_*` of an outer `npm test` (workspace, prefix) must not leak into the host's npm.
      {
        cwd,
        timeout,
        maxBuffer: 64 * 1024 * 1024,
        env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))
      },
      (error, stdout, stderr) =>
        error === null
          ? resolve({ stdout, stderr })
          : reject(
              new Error(
                `${command} ${args.join(" ")} (in ${cwd}) failed: ${error.message}\n${stdout}\n${stderr}`
              )
            )
    )
  })

/** What the test reads of a package.json. */
interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly bin?: unknown
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
}

const readJson = (file: string): Manifest => JSON.parse(fs.readFileSync(file, "utf8"))

/** The workspace's packages that are published: not `private`. */
const publishable = fs
  .readdirSync(path.join(root, "packages"))
  .map((dir) => ({
    dir: path.join(root, "packages", dir),
    pkg: readJson(path.join(root, "packages", dir, "package.json"))
  }))
  .filter(({ pkg }) => pkg.private !== true)
const libraries = publishable.filter(({ pkg }) => pkg.bin === undefined)

const registry = (await run(npm, ["config", "get", "registry"], root).catch(() => undefined))?.stdout.trim()
const registryUp = await fetch(new URL("effect", registry ?? "https://registry.npmjs.org/"), {
  signal: AbortSignal.timeout(20_000)
}).then(
  (response) => response.ok,
  () => false
)
if (!registryUp) {
  const message = `Packages.test: the npm registry (${registry}) is not reachable: the packed packages are NOT tested`
  if (process.env["CI"] !== undefined) throw new Error(message)
  console.warn(`\n!!! ${message} !!!\n`)
}

/** Runs `tasks` two at a time (the machines this runs on have two cores). */
const inPairs = async <A>(tasks: ReadonlyArray<() => Promise<A>>): Promise<Array<A>> => {
  const results: Array<A> = []
  for (let i = 0; i < tasks.length; i += 2)
    results.push(...(await Promise.all(tasks.slice(i, i + 2).map((t) => t()))))
  return results
}

const host = `
import { Cobro, CobroError } from "@cobro/client"
import { Accounts, Engine, Faucet, Money, PaymentRequest, Payments } from "@cobro/core"
import { CobroHttp } from "@cobro/http"
import type { NodeHttp } from "@cobro/http/node"
import { Migrations } from "@cobro/sql"
import type { PgStorage } from "@cobro/sql-pg"
import type { SqliteStorage } from "@cobro/sql-sqlite"
import { Receiver, Signature } from "@cobro/webhooks"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"

// The node:http listener and the storage layers are type-checked only (no server, no database).
export type Listener = Awaited<ReturnType<typeof NodeHttp.toNodeListener>>["listener"]
export type Stores = ReturnType<typeof SqliteStorage.layer> | ReturnType<typeof PgStorage.layer>
export const migrations: unknown = Migrations

const engine = ManagedRuntime.make(Engine.layerMemory())

const paid = await engine.runPromise(
  Effect.gen(function* () {
    const request = yield* Accounts.decodeCreateUserRequest({
      user_id: "host_1",
      name: "Host",
      email: "host@example.com",
      cuit: "30-50001234-6",
      account_status: "ACTIVE"
    })
    const { user } = yield* (yield* Accounts.Accounts).createUser(request)
    const payments = yield* Payments.Payments
    const created = yield* payments.create(
      yield* Schema.decodeUnknown(PaymentRequest.CreatePaymentRequest)({
        user_id: user.user_id,
        external_id: "order-1",
        price: { amount: 100.5, currency: "ARS" },
        payment_options: ["transfer"]
      })
    )
    yield* (yield* Faucet.Faucet).send(user.user_id, created.cvu, { amount: 100.5 })
    const payment = yield* payments.get(user.user_id, created.id)
    const status: string = payment.payment_status
    return { id: payment.id, status, received: Money.format(payment.totalReceived) }
  })
)

const shared = Layer.succeedContext((await engine.runtime()).context)
const { handler, dispose } = CobroHttp.toWebHandler(shared)
const answer = await handler(new Request("http://host.test/openapi.json"))
const openapi = (await answer.json()) as { readonly openapi: string }
// The Promise client, its fetch being the handler: the payer's view, and an error as CobroError.
const client = new Cobro({ baseUrl: "http://host.test", fetch: (request) => handler(request) })
const publicView = await client.getPublicPayment(paid.id)
const missing = await client.getPublicPayment("VAR-host_1-nope").catch((e: unknown) => e)
await dispose()
await engine.dispose()

// A declaration that did not resolve would make these \`any\` (skipLibCheck hides its error).
type IsAny<T> = 0 extends 1 & T ? true : false
export const typed: [
  IsAny<typeof paid.received>,
  IsAny<typeof handler>,
  IsAny<Listener>,
  IsAny<Stores>,
  IsAny<typeof publicView.data.payment_status>
] = [false, false, false, false, false]

const body = new TextEncoder().encode(JSON.stringify({ id: paid.id }))
const signature = Signature.serviceSignature("secret", body)

console.log(
  JSON.stringify({
    ...paid,
    openapi: openapi.openapi,
    httpStatus: answer.status,
    receiverExports: Object.keys(Receiver).length > 0,
    signature: typeof signature,
    client: [publicView.data.payment_status, missing instanceof CobroError ? [missing.status, missing.message] : null]
  })
)
`

describe.skipIf(!registryUp)("the packed packages in a fresh project", () => {
  let work = ""
  let project = ""
  const packed: Array<{
    readonly name: string
    readonly files: ReadonlyArray<string>
    readonly tarball: string
  }> = []
  /** Facts about the project with the libraries only, before the server is installed. */
  const librariesOnly = { platformNode: true, cluster: true }

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-packages-"))
    const tarballs = path.join(work, "tarballs")
    fs.mkdirSync(tarballs)

    // 1. Build each package into a staging copy (package.json, README, LICENSE, bin) and pack it.
    await inPairs(
      publishable.map(({ dir, pkg }) => async () => {
        const stage = path.join(work, "stage", path.basename(dir))
        fs.mkdirSync(stage, { recursive: true })
        await run(process.execPath, [tsup, "--out-dir", path.join(stage, "dist")], dir)
        for (const file of ["package.json", "README.md", "LICENSE"])
          fs.copyFileSync(path.join(dir, file), path.join(stage, file))
        if (fs.existsSync(path.join(dir, "bin")))
          fs.cpSync(path.join(dir, "bin"), path.join(stage, "bin"), { recursive: true })
        const { stdout } = await run(npm, ["pack", "--json", "--pack-destination", tarballs], stage)
        const [info] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>
        packed.push({
          name: pkg.name,
          files: info!.files.map((f) => f.path),
          tarball: path.join(tarballs, info!.filename)
        })
      })
    )
    const tarball = (name: string) => packed.find((p) => p.name === name)!.tarball

    // 2. A fresh project: the libraries, `effect` and `@types/node` at the workspace's versions.
    project = path.join(work, "host")
    fs.mkdirSync(project)
    fs.writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify({ name: "cobro-host", version: "0.0.0", private: true, type: "module" }, null, 2)
    )
    const version = (name: string) => readJson(require.resolve(`${name}/package.json`)).version
    // Install scripts stay off: better-sqlite3 would build from source without a prebuilt binary,
    // and the host does not open a database.
    const install = ["install", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"]
    await run(
      npm,
      [
        ...install,
        ...libraries.map(({ pkg }) => tarball(pkg.name)),
        `effect@${version("effect")}`,
        `@types/node@${version("@types/node")}`
      ],
      project
    )
    librariesOnly.platformNode = fs.existsSync(path.join(project, "node_modules", "@effect", "platform-node"))
    librariesOnly.cluster = fs.existsSync(path.join(project, "node_modules", "@effect", "cluster"))

    // 3. The server (an application: its own dependencies, `@effect/platform-node` among them).
    await run(
      npm,
      [...install, ...publishable.filter((p) => !libraries.includes(p)).map((p) => tarball(p.pkg.name))],
      project
    )
  }, minutes(15))

  // Removing the host's node_modules takes more than vitest's default 10 s on a busy machine.
  afterAll(() => {
    if (work !== "") fs.rmSync(work, { recursive: true, force: true })
  }, minutes(2))

  it("every publishable package is packed with its LICENSE, README, package.json and built code only", () => {
    expect(packed.map((p) => p.name).sort()).toEqual(publishable.map((p) => p.pkg.name).sort())
    for (const { name, files } of packed) {
      expect(files, name).toEqual(
        expect.arrayContaining(["LICENSE", "README.md", "package.json", "dist/index.js", "dist/index.d.ts"])
      )
      expect(
        files.filter((f) => f.startsWith("src/") || f.startsWith("test/")),
        name
      ).toEqual([])
    }
  })

  it("the package.json of each says where it comes from, its license and its Node.js", () => {
    for (const { pkg } of publishable) {
      expect(pkg, pkg.name).toMatchObject({
        license: "MIT",
        engines: { node: expect.any(String) },
        repository: { url: expect.any(String), directory: expect.any(String) },
        homepage: expect.any(String),
        keywords: expect.arrayContaining(["payments"])
      })
    }
  })

  it("the libraries take effect and @effect/* as peers: one copy of effect in the host", () => {
    // @cobro/client is for hosts without Effect: it has none, not even as a peer.
    const client = libraries.find(({ pkg }) => pkg.name === "@cobro/client")!.pkg
    expect(
      Object.keys({ ...client.dependencies, ...client.peerDependencies }).filter(
        (d) => d === "effect" || d.startsWith("@effect/") || d.startsWith("@cobro/")
      )
    ).toEqual([])
    for (const { pkg } of libraries.filter(({ pkg }) => pkg.name !== "@cobro/client")) {
      const dependencies = Object.keys(pkg.dependencies ?? {})
      expect(
        dependencies.filter((d) => d === "effect" || d.startsWith("@effect/")),
        pkg.name
      ).toEqual([])
      expect(pkg.peerDependencies, pkg.name).toHaveProperty("effect")
    }
    const copies: Array<string> = []
    const walk = (dir: string, depth: number) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue
        const full = path.join(dir, entry.name)
        if (entry.name === "effect" && path.basename(dir) === "node_modules")
          copies.push(path.relative(project, full))
        if (depth < 12) walk(full, depth + 1)
      }
    }
    walk(path.join(project, "node_modules"), 0)
    expect(copies).toEqual([path.join("node_modules", "effect")])
  })

  it("@cobro/http does not pull @effect/platform-node (nor cluster) into a host without the node adapter", () => {
    expect(librariesOnly).toEqual({ platformNode: false, cluster: false })
  })

  it(
    "a host type-checks against the packed declarations and runs on the sandbox engine",
    async () => {
      fs.writeFileSync(path.join(project, "host.ts"), host)
      fs.writeFileSync(
        path.join(project, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            target: "ES2022",
            lib: ["ES2022"],
            module: "NodeNext",
            moduleResolution: "NodeNext",
            strict: true,
            exactOptionalPropertyTypes: true,
            skipLibCheck: true,
            types: ["node"],
            outDir: "out"
          },
          files: ["host.ts"]
        })
      )
      await run(process.execPath, [tsc, "-p", "."], project)
      const { stdout } = await run(process.execPath, [path.join("out", "host.js")], project, minutes(1))
      expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toEqual({
        id: "VAR-host_1-order-1",
        status: "SUCCESS",
        received: "100.50",
        openapi: expect.stringMatching(/^3\./),
        httpStatus: 200,
        receiverExports: true,
        signature: "string",
        client: ["SUCCESS", [404, "payment.not.found"]]
      })
    },
    minutes(3)
  )

  it(
    "the installed cobro command runs from the built code",
    async () => {
      const { stdout } = await run(
        process.execPath,
        [path.join(project, "node_modules", "@cobro", "server", "bin", "cobro.js"), "--help"],
        project,
        minutes(1)
      )
      expect(stdout).toContain("serve")
    },
    minutes(2)
  )
})
