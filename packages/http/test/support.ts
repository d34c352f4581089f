/**
 * An in-process cobro server on a random port over the in-memory sandbox engine, plus helpers
 * to make merchants, partners and tokens through the engine and to call the API.
 */
import { HttpApiBuilder, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import {
  Accounts,
  Auth,
  BankAccount,
  Engine,
  type EngineConfig,
  type Errors,
  Ids,
  Principal,
  SecondFactor,
  WebSessions
} from "@cobro/core"
import { Effect, Layer, Option, Schema } from "effect"
import { Api, type Client, CobroHttp, type HttpConfig } from "../src/index.js"
import {
  SandboxAccounts,
  SandboxBank,
  SandboxClocks,
  SandboxEngine,
  type TestClocks
} from "@cobro/bank-sandbox"
import * as TestSecondFactors from "./secondFactors.js"

// Exported helpers carry explicit types: declarations are emitted for tests too, and the
// inferred types would name core's internal modules.
type EngineLayer = ReturnType<typeof SandboxEngine.layerMemory>
type TestServerLayer = typeof NodeHttpServer.layerTest

/** The engine's services, the test server and an `HttpClient` pointed at it. */
export type ServerLayer = Layer.Layer<
  | Layer.Layer.Success<EngineLayer>
  | SandboxAccounts.SandboxAccounts
  | Layer.Layer.Success<typeof TestSecondFactors.layer>
  | TestClocks.TestClocks
  | WebSessions.WebSessions
  | Layer.Layer.Success<TestServerLayer>,
  Layer.Layer.Error<EngineLayer> | Layer.Layer.Error<TestServerLayer>
>

export const serverLayer = (
  settings: Partial<HttpConfig.Settings> = {},
  engine: Partial<EngineConfig.EngineSettings> = {}
): ServerLayer => {
  // The merchants' test clocks (in memory, one instance: no re-reads), below the engine so that
  // it follows them.
  const storage = SandboxClocks.layerWith({ refreshEvery: undefined }).pipe(
    Layer.provideMerge(Engine.layerMemoryStorage)
  )
  return HttpApiBuilder.serve().pipe(
    Layer.provide(CobroHttp.layer(settings)),
    // The sandbox bank's accounts testers register (the server stores them; here, in memory).
    Layer.provideMerge(SandboxAccounts.layerMemory),
    // The merchants' second factors (their routes; payout accounts keep the sandbox's codes).
    // The dashboard's sessions (served when `settings.dashboard` is set).
    Layer.provideMerge(WebSessions.WebSessions.Default),
    Layer.provideMerge(TestSecondFactors.layer),
    Layer.provideMerge(SandboxClocks.testClocks),
    Layer.provideMerge(SandboxEngine.layerSandbox(storage, engine)),
    Layer.provideMerge(storage),
    Layer.provideMerge(NodeHttpServer.layerTest)
  )
}

/** An ACTIVE merchant with its credentials. */
export const merchant = (
  user_id: string,
  fields: { alias_prefix?: string } = {}
): Effect.Effect<Accounts.CreatedUser, Errors.DomainError, Accounts.Accounts> =>
  Effect.gen(function* () {
    const accounts = yield* Accounts.Accounts
    const created = yield* accounts.createUser(
      Schema.decodeUnknownSync(Accounts.CreateUserRequest)({
        user_id,
        name: `Tienda ${user_id}`,
        email: `${user_id}@example.com`,
        cuit: BankAccount.makeCuit("30", "71234567"),
        account_status: "ACTIVE"
      })
    )
    if (fields.alias_prefix !== undefined) {
      yield* accounts.updateAccount(
        Principal.Principal.User({ user_id: created.user.user_id }),
        created.user.user_id,
        Schema.decodeUnknownSync(Accounts.AccountPatch)({ alias_prefix: fields.alias_prefix })
      )
    }
    return created
  })

/** A user token for `user_id`, issued through the engine. */
export const tokenFor = (
  user_id: string,
  client_id: string,
  client_secret: string
): Effect.Effect<string, Errors.DomainError, Auth.Auth> =>
  Effect.map(
    Effect.flatMap(Auth.Auth, (auth) =>
      auth.issueUserToken(Ids.UserId.make(user_id), new Auth.TokenRequest({ client_id, client_secret }))
    ),
    (t) => t.token
  )

/** The typed client against the test server, optionally with a bearer token. */
export const client = (token?: string): Effect.Effect<Client.Client, never, HttpClient.HttpClient> =>
  HttpApiClient.make(Api.CobroApi, {
    transformClient: (c) =>
      token === undefined ? c : HttpClient.mapRequest(c, HttpClientRequest.bearerToken(token))
  })

/**
 * A raw request against the test server: status, headers and parsed JSON body. Every answer must
 * carry `Request-Id`; an error envelope's `request_id` must be that id, and is taken out of `body`
 * (still in `text`) so that tests compare the rest of the envelope.
 */
export const raw = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.gen(function* () {
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(request)
    const text = yield* response.text
    let body: unknown = undefined
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    const requestId = response.headers["request-id"]
    if (requestId === undefined) throw new Error(`${request.method} ${request.url}: no Request-Id header`)
    if (typeof body === "object" && body !== null && (body as { error?: unknown }).error === true) {
      const { request_id, ...rest } = body as { request_id?: unknown }
      if (request_id !== requestId) {
        throw new Error(
          `${request.method} ${request.url}: envelope request_id ${String(request_id)} is not the header's ${requestId}`
        )
      }
      body = rest
    }
    return { status: response.status, headers: response.headers, body, text }
  })

// ---------------------------------------------------------------------------------------------
// Route-test helpers

/** A parsed JSON body, for reading fields in assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any

/** The CUIT every `merchant(...)` is created with (a payout schedule's address must match it). */
export const merchantCuit = BankAccount.makeCuit("30", "71234567")

/** A raw request with an optional JSON body, bearer token and extra headers. */
export const call = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: {
    readonly body?: unknown
    readonly token?: string
    readonly headers?: Record<string, string>
  } = {}
) => {
  let request = HttpClientRequest.make(method)(path)
  if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
  if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
  if (options.body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, options.body)
  return raw(request)
}

/** A partner registered "with support" (its `client_id` and `client_secret` are shown once). */
export const partner = (
  name: string
): Effect.Effect<
  Effect.Effect.Success<ReturnType<Auth.Auth["registerPartner"]>>,
  Errors.DomainError,
  Auth.Auth
> =>
  Effect.flatMap(Auth.Auth, (auth) =>
    auth.registerPartner(
      Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
        name,
        redirect_url: "https://partner.example.com/callback",
        webhook_url: "https://partner.example.com/hooks"
      })
    )
  )

/** A `PAR-` token of `registered` for `user_id`: a code issued by the engine and exchanged. */
export const partnerTokenFor = (
  registered: {
    readonly partner: { readonly partner_id: Ids.PartnerId }
    readonly client_id: string
    readonly client_secret: string
  },
  user_id: string
): Effect.Effect<string, Errors.DomainError, Auth.Auth> =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth
    const { code } = yield* auth.issueCode(registered.partner.partner_id, Ids.UserId.make(user_id))
    const grant = yield* auth.exchangeCode(
      new Auth.CodeExchangeRequest({
        code,
        client_id: registered.client_id,
        client_secret: registered.client_secret
      })
    )
    return grant.access_token
  })

let nextHolder = 1

/**
 * An external bank account (a CBU) the sandbox bank knows, so its holder can be looked up;
 * `cuit` defaults to a fresh person's CUIT (use `merchantCuit` for the merchant's own account).
 */
export const bankHolder = (name: string, cuit?: string) =>
  Effect.gen(function* () {
    const n = nextHolder++
    const account = BankAccount.makeCbu("0170099", n.toString().padStart(13, "0"))
    yield* (yield* SandboxBank.SandboxBank).registerHolder({
      account,
      cuit:
        cuit === undefined
          ? BankAccount.makeCuit("20", (40000000 + n).toString())
          : BankAccount.Cuit.make(cuit),
      name
    })
    return account as string
  })

/** The 2FA code the sandbox "delivered" for a payout-account verification request. */
export const secondFactorCode = (request_id: string) =>
  Effect.flatMap(SecondFactor.SandboxSecondFactor, (s) =>
    s.codeFor(Ids.VerificationRequestId.make(request_id))
  ).pipe(Effect.map(Option.getOrThrow))
