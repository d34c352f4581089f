/**
 * The router of the hosted pages: HTML for people (the payer's page, partner onboarding, and the
 * pages a host adds), beside the API and outside its boundary (`internal/edge.ts`). A request the
 * API does not know goes to this router; a path no page has either falls through to the API's
 * one answer of a path it does not know (404, or 405 naming the methods).
 *
 * A set of pages is a layer that adds its routes: `PageRouter.use((router) => router.get(…))`,
 * listed in `pageLayers` of `CobroHttp.ts` (which builds every page layer before the edge reads
 * the router). Its handlers answer every outcome themselves, as pages; they check their own
 * content types and read their own bodies (within the configured limit).
 */
import * as HttpRouter from "@effect/platform/HttpRouter"

export class PageRouter extends HttpRouter.Tag("@cobro/http/PageRouter")<PageRouter>() {}
