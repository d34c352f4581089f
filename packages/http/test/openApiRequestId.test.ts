/** The OpenAPI document lists the `Request-Id` header on every response of every route. */
import { describe, expect, it } from "@effect/vitest"
import * as OpenApi from "@effect/platform/OpenApi"
import { Api } from "@cobro/http"

describe("the OpenAPI document's Request-Id", () => {
  it("is a header of every response, described once as a component", () => {
    const spec = OpenApi.fromApi(Api.CobroApi) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>
      components: { headers: Record<string, { description: string }> }
    }
    const responses = Object.values(spec.paths).flatMap((item) =>
      Object.values(item).flatMap((operation) => Object.entries(operation.responses))
    )
    expect(responses.length).toBeGreaterThan(100)
    for (const [status, response] of responses) {
      expect([status, response.headers]).toEqual([
        status,
        { "Request-Id": { $ref: "#/components/headers/RequestId" } }
      ])
    }
    expect(spec.components.headers["RequestId"]?.description).toContain("X-Request-Id")
  })
})
