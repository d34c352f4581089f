/** The request types of a route, read from the OpenAPI document's `paths`. */
import type { paths } from "../generated/openapi.js"

export type Method = "get" | "put" | "post" | "patch"

/** The JSON body a route takes. */
export type RequestBody<P extends keyof paths, M extends Method> =
  NonNullable<paths[P][M]> extends { requestBody?: { content: { "application/json": infer B } } } ? B : never

/** The query parameters a route takes, `user_id` optional (the client's merchant by default). */
export type MerchantQuery<P extends keyof paths, M extends Method> = Omit<Query<P, M>, "user_id"> & {
  readonly user_id?: string
}

/** The query parameters a route takes. */
export type Query<P extends keyof paths, M extends Method> =
  NonNullable<paths[P][M]> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never
