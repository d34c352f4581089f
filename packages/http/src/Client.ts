/**
 * The typed client: every route of `CobroApi` as a method, requests and responses decoded with
 * the same schemas the server uses. Failures arrive as `ApiError` (status, key, detail, field).
 *
 * ```ts
 * const client = yield* Client.make({ baseUrl: "http://localhost:3000", token })
 * const { data } = yield* client.publicPayments.create({ payload: { ... }, headers: {} })
 * ```
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import type * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { Effect } from "effect"
import { CobroApi } from "./Api.js"

export interface Options {
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer <token>` on every request. */
  readonly token?: string
}

type Groups = typeof CobroApi extends HttpApi.HttpApi<infer _Id, infer G, infer _E, infer _R> ? G : never

export type Client = HttpApiClient.Client<Groups, HttpApiError.HttpApiDecodeError, never>

export const make = (options: Options): Effect.Effect<Client, never, HttpClient.HttpClient> =>
  HttpApiClient.make(CobroApi, {
    baseUrl: options.baseUrl,
    transformClient: (client) =>
      options.token === undefined
        ? client
        : HttpClient.mapRequest(client, HttpClientRequest.bearerToken(options.token))
  })
