/**
 * The packages as a consumer gets them. Every publishable package of the workspace is built as
 * `npm run build` builds it (tsup for the JavaScript, `tsconfig.build.json` for one declaration
 * file per source file: here the same declarations taken from `tsc -b`'s output, see below) and
 * packed (`npm pack`); the tarballs are installed into a fresh project
 * under the system's temporary folder (outside the workspace, so nothing resolves to the sources)
 * with the packages' READMEs' own install lines, `@cobro/*` names replaced by the tarballs. A host
 * there is type-checked with `strict` and `skipLibCheck: false` against the packed declarations
 * (writing `Principal.Principal` itself, as docs/embedding.md tells hosts to) and run: a merchant
 * and a payment on the in-memory sandbox engine, the same payment read back through `@cobro/http`'s
 * fetch handler and through `@cobro/client` over that handler, and a webhook signature checked
 * with `@cobro/webhooks`. A second project installs `@cobro/core` with the registry's latest
 * `effect` (4.x) and gets the one sentence that says what to install.
 *
 * Nothing in the work tree is written but `tsc -b`'s incremental output (up to date after
 * `npm run typecheck`): each package is built into a staging copy under the temporary folder. Its
 * declarations are the ones `tsc -b` emitted under `build/tsc/src/` (the same compiler's emit of the
 * same sources with the same options but the declaration maps; a second emit per package through
 * `tsconfig.build.json` cost about a minute of CPU): the first test holds every package's
 * `tsconfig.build.json` and `build` script to that, so what is packed here is what `npm run build`
 * writes.
 * `effect`, `@types/*` and the packages' dependencies come from the npm registry (from npm's cache
 * when it has them). Without a registry those tests are skipped with a warning, except under CI
 * (`CI` set), where it fails.
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
import type { BindBank } from "@cobro/bank-bind"
import { Cobro, CobroError } from "@cobro/client"
import { Accounts, type Auth, Money, PaymentRequest, Payments, Principal } from "@cobro/core"
import { Faucet, SandboxEngine } from "@cobro/bank-sandbox"
import { CobroHttp } from "@cobro/http"
import type { NodeHttp } from "@cobro/http/node"
import type { Server, ServerConfig } from "@cobro/server"
import { Migrations } from "@cobro/sql"
import type { PgStorage } from "@cobro/sql-pg"
import type { SqliteStorage } from "@cobro/sql-sqlite"
import { Receiver, Signature } from "@cobro/webhooks"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"

// The type docs/embedding.md tells hosts to write: what Auth.authenticate answers, the
// partner-aware services take. A declaration that kept only the value fails here (TS2749).
export const describePrincipal = (principal: Principal.Principal): string => principal._tag
export type Authenticated = Effect.Effect.Success<ReturnType<Auth.Auth["authenticate"]>>
export const asPrincipal = (authenticated: Authenticated): Principal.Principal => authenticated
export const userPrincipal = Principal.Principal.User

// The node:http listener, the storage layers, the server and BIND are type-checked only (no
// server, no database, no bank).
export type Listener = Awaited<ReturnType<typeof NodeHttp.toNodeListener>>["listener"]
export type Stores = ReturnType<typeof SqliteStorage.layer> | ReturnType<typeof PgStorage.layer>
export type Serve = typeof Server.run
export type Configured = typeof ServerConfig.load
export type Bind = typeof BindBank.layerConfig
export const migrations: unknown = Migrations

const engine = ManagedRuntime.make(SandboxEngine.layerMemory())

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

// A declaration that did not resolve would make these \`any\`.
type IsAny<T> = 0 extends 1 & T ? true : false
export const typed: [
  IsAny<typeof paid.received>,
  IsAny<typeof handler>,
  IsAny<Listener>,
  IsAny<Stores>,
  IsAny<typeof publicView.data.payment_status>,
  IsAny<Principal.Principal>,
  IsAny<Serve>,
  IsAny<Configured>,
  IsAny<Bind>
] = [false, false, false, false, false, false, false, false, false]

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

/**
 * Copies the declarations `tsc -b` emitted for the package in `dir` (`build/tsc/src/**\/*.d.ts`,
 * `rootDir` being the package) into `out`, as `tsconfig.build.json` (`rootDir: src`, no
 * declaration maps) writes them to `dist`: one per source file of `src` (a declaration left over
 * from a removed source is not taken), without the `sourceMappingURL` comment.
 */
const copyDeclarations = (dir: string, out: string) => {
  const src = path.join(dir, "src")
  for (const entry of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts") || entry.name.endsWith(".d.ts")) continue
    const relative = path.relative(src, path.join(entry.parentPath, entry.name)).replace(/\.ts$/, ".d.ts")
    const emitted = path.join(dir, "build", "tsc", "src", relative)
    if (!fs.existsSync(emitted)) throw new Error(`${emitted}: no declaration from tsc -b for ${relative}`)
    const text = fs.readFileSync(emitted, "utf8").replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n")
    fs.mkdirSync(path.dirname(path.join(out, relative)), { recursive: true })
    fs.writeFileSync(path.join(out, relative), text)
  }
}

/** The arguments of each `npm install …` line of a shell block of a Markdown file (before `&&` or `#`). */
const installLines = (file: string): Array<Array<string>> =>
  [...fs.readFileSync(file, "utf8").matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap(([, block]) => block!.split("\n"))
    .map((line) => line.split(/&&|#/)[0]!.trim().split(/\s+/))
    .filter((words) => words[0] === "npm" && words[1] === "install")
    .map((words) => words.slice(2))

/** `^3.22.4` as an install line names it: `^3.22`. */
const shortRange = (range: string) => range.replace(/^(\^\d+\.\d+)\.\d+$/, "$1")

/** The range of `effect` and of each `@effect/*` package our packages take, as install lines name them. */
const effectRanges = new Map(
  publishable.flatMap(({ pkg }) =>
    Object.entries({ ...pkg.dependencies, ...pkg.peerDependencies })
      .filter(([name]) => name === "effect" || name.startsWith("@effect/"))
      .map(([name, range]) => [name, shortRange(range)] as const)
  )
)

/** Every Markdown file a user reads install lines in. */
const documents = [
  "README.md",
  ...fs
    .readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join("docs", f)),
  ...["packages", "examples"].flatMap((folder) =>
    fs
      .readdirSync(path.join(root, folder))
      .map((dir) => path.join(folder, dir, "README.md"))
      .filter((file) => fs.existsSync(path.join(root, file)))
  )
]

describe("install lines", () => {
  it("name the Effect 3 range of every effect and @effect/* package they install: the registry's latest is Effect 4", () => {
    const unpinned = documents.flatMap((file) =>
      installLines(path.join(root, file)).flatMap((args) =>
        args
          .filter((arg) => arg === "effect" || arg.startsWith("effect@") || arg.startsWith("@effect/"))
          .filter((arg) => {
            const at = arg.lastIndexOf("@")
            const [name, range] = at > 0 ? [arg.slice(0, at), arg.slice(at + 1)] : [arg, undefined]
            return range === undefined || effectRanges.get(name) !== range
          })
          .map((arg) => `${file}: ${arg}`)
      )
    )
    expect(unpinned).toEqual([])
    expect(effectRanges.get("effect")).toBe("^3.22")
    // Each published package's README installs it first thing (the packed test runs these lines).
    for (const { dir, pkg } of publishable)
      expect(installLines(path.join(dir, "README.md"))[0] ?? [], pkg.name).toContain(pkg.name)
  })
})

describe("the build", () => {
  it("each package's build emits its declarations as `tsc -b` does, so the packed test can take tsc -b's", () => {
    const json = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"))
    const references = (config: { references?: ReadonlyArray<{ path: string }> }) =>
      (config.references ?? []).map((r) => r.path)
    for (const { dir, pkg } of publishable) {
      const manifest = json(path.join(dir, "package.json"))
      expect(manifest.scripts?.build, pkg.name).toBe("tsup && tsc -b tsconfig.build.json")
      const build = json(path.join(dir, "tsconfig.build.json"))
      expect(build, pkg.name).toMatchObject({
        extends: "../../tsconfig.declarations.json",
        compilerOptions: { rootDir: "src", outDir: "dist" },
        include: ["src"]
      })
      expect(Object.keys(build.compilerOptions).sort(), pkg.name).toEqual(["outDir", "rootDir"])
      // The project `tsc -b` builds: the package as root, its declarations under build/tsc/src.
      const project = json(path.join(dir, "tsconfig.json"))
      expect(project, pkg.name).toMatchObject({
        extends: "../../tsconfig.base.json",
        compilerOptions: { outDir: "build/tsc", rootDir: ".", emitDeclarationOnly: true }
      })
      expect(project.include, pkg.name).toContain("src")
      expect(references(project), pkg.name).toEqual(expect.arrayContaining(references(build)))
    }
    // The declarations' options are the base's but for what only changes how much is written:
    // no maps, no type-check (tsc -b checked), no incremental state.
    expect(json(path.join(root, "tsconfig.declarations.json"))).toEqual({
      extends: "./tsconfig.base.json",
      compilerOptions: {
        composite: false,
        incremental: false,
        declarationMap: false,
        sourceMap: false,
        emitDeclarationOnly: true,
        noCheck: true
      }
    })
  })
})

describe.skipIf(!registryUp)("the packed packages in a fresh project", () => {
  let work = ""
  let project = ""
  let effect4 = ""
  const packed: Array<{
    readonly name: string
    readonly files: ReadonlyArray<string>
    readonly tarball: string
  }> = []
  const tarball = (name: string) => packed.find((p) => p.name === name)!.tarball
  /** Facts about the project with the libraries only, before the server is installed. */
  const librariesOnly = { platformNode: true, cluster: true }

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), "cobro-packages-"))
    const tarballs = path.join(work, "tarballs")
    fs.mkdirSync(tarballs)

    // 1. Build each package as `npm run build` does, into a staging copy (package.json, README,
    // LICENSE, bin), and pack it: tsup's JavaScript, and the declarations `tsc -b` wrote (up to
    // date after `npm run typecheck`; built here when they are not).
    await run(process.execPath, [tsc, "-b", ...publishable.map(({ dir }) => dir)], root)
    await inPairs(
      publishable.map(({ dir, pkg }) => async () => {
        const stage = path.join(work, "stage", path.basename(dir))
        fs.mkdirSync(stage, { recursive: true })
        await run(process.execPath, [tsup, "--out-dir", path.join(stage, "dist")], dir)
        copyDeclarations(dir, path.join(stage, "dist"))
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
    /** A README's install line, each `@cobro/*` package replaced by its tarball. */
    const withTarballs = (args: ReadonlyArray<string>) =>
      args.map((arg) => packed.find((p) => p.name === arg)?.tarball ?? arg)
    const readmeLines = (packages: typeof publishable) =>
      packages.map(({ dir }) => installLines(path.join(dir, "README.md")).map(withTarballs))

    const newProject = (name: string) => {
      const dir = path.join(work, name)
      fs.mkdirSync(dir)
      fs.writeFileSync(
        path.join(dir, "package.json"),
        JSON.stringify({ name: `cobro-${name}`, version: "0.0.0", private: true, type: "module" }, null, 2)
      )
      return dir
    }
    const version = (name: string) => readJson(require.resolve(`${name}/package.json`)).version
    // Install scripts stay off: better-sqlite3 would build from source without a prebuilt binary,
    // and the host does not open a database.
    const install = ["install", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"]

    // 2. A fresh project: each library's first README line (the node:http adapter's own line is
    // the next step), and the types a TypeScript host adds (`@types/node`; `@types/pg` for
    // `@effect/sql-pg`'s declarations under `skipLibCheck: false`).
    project = newProject("host")
    const libraryLines = readmeLines(libraries)
    const first = libraryLines.map(([line]) => line!)
    const rest = libraryLines.flatMap((lines) => lines.slice(1))
    await run(
      npm,
      [
        ...install,
        ...first.flat(),
        `@types/node@${version("@types/node")}`,
        `@types/pg@${version("@types/pg")}`
      ],
      project
    )
    librariesOnly.platformNode = fs.existsSync(path.join(project, "node_modules", "@effect", "platform-node"))
    librariesOnly.cluster = fs.existsSync(path.join(project, "node_modules", "@effect", "cluster"))

    // 3. The other lines (`@effect/platform-node` for `@cobro/http/node`) and the server's (an
    // application: its own dependencies). Meanwhile, a second project installs `@cobro/core` as
    // the READMEs once said, `npm install @cobro/core effect`: npm takes the registry's latest
    // `effect` (4.x), overriding the peer range with a warning.
    effect4 = newProject("effect4")
    await Promise.all([
      run(
        npm,
        [
          ...install,
          ...[...rest, ...readmeLines(publishable.filter((p) => !libraries.includes(p))).flat()].flat()
        ],
        project
      ),
      run(npm, [...install, tarball("@cobro/core"), "effect"], effect4)
    ])
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
    "a host type-checks against the packed declarations with skipLibCheck: false and runs on the sandbox engine",
    async () => {
      fs.writeFileSync(path.join(project, "host.ts"), host)
      fs.writeFileSync(
        path.join(project, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            target: "ES2022",
            // @effect/platform's and @effect/experimental's declarations name DOM types
            // (`Storage`, `Crypto`) that @types/node lacks: checked, they need "DOM".
            lib: ["ES2022", "DOM"],
            module: "NodeNext",
            moduleResolution: "NodeNext",
            strict: true,
            exactOptionalPropertyTypes: true,
            skipLibCheck: false,
            types: ["node"],
            outDir: "out"
          },
          files: ["host.ts"]
        })
      )
      // skipLibCheck: false checks every declaration file the host reaches (effect's among them):
      // about 25 s of CPU, minutes on a busy machine.
      await run(process.execPath, [tsc, "-p", "."], project, minutes(10))
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
    minutes(12)
  )

  it(
    "a host that got effect 4 fails at its first import of a package with the sentence that says what to install",
    async () => {
      const installed = readJson(path.join(effect4, "node_modules", "effect", "package.json")).version
      expect(installed).toMatch(/^4\./)
      fs.writeFileSync(
        path.join(effect4, "host.js"),
        `import { Engine } from "@cobro/core"\nconsole.log(typeof Engine)\n`
      )
      const failure = await run(process.execPath, ["host.js"], effect4, minutes(1)).then(
        () => "ran",
        (error: Error) => error.message
      )
      expect(failure).toContain(
        `@cobro/core needs effect ^3.22.4 (Effect 3) but found effect ${installed}: install the Effect 3 line with \`npm install effect@^3.22\`.`
      )
      expect(failure).not.toContain("ERR_MODULE_NOT_FOUND")
      expect(failure).not.toContain("does not provide an export")
    },
    minutes(2)
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
