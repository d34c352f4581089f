/**
 * An in-process cobro server on a random port over the in-memory sandbox engine, plus helpers
 * to make merchants, partners and tokens through the engine and to call the API.
 */
import { HttpApiBuilder, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Accounts, Auth, BankAccount, Engine, Ids, Principal } from "@cobro/core"
import { Effect, Layer, Schema } from "effect"
import { Api, CobroHttp, type HttpConfig } from "../src/index.js"

export const serverLayer = (settings: Partial<HttpConfig.Settings> = {}) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(CobroHttp.layer(settings)),
    Layer.provideMerge(Engine.layerMemory()),
    Layer.provideMerge(NodeHttpServer.layerTest)
  )

/** An ACTIVE merchant with its credentials. */
export const merchant = (user_id: string, fields: { alias_prefix?: string } = {}) =>
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
export const tokenFor = (user_id: string, client_id: string, client_secret: string) =>
  Effect.map(
    Effect.flatMap(Auth.Auth, (auth) =>
      auth.issueUserToken(Ids.UserId.make(user_id), new Auth.TokenRequest({ client_id, client_secret }))
    ),
    (t) => t.token
  )

/** The typed client against the test server, optionally with a bearer token. */
export const client = (token?: string) =>
  HttpApiClient.make(Api.CobroApi, {
    transformClient: (c) =>
      token === undefined ? c : HttpClient.mapRequest(c, HttpClientRequest.bearerToken(token))
  })

/** A raw request against the test server: status, headers and parsed JSON body. */
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
    return { status: response.status, headers: response.headers, body, text }
  })
