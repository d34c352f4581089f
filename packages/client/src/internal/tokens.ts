/**
 * The merchant's bearer token: fetched with its credentials (`POST /users/{id}/tokens`) when first
 * needed, kept until shortly before its `expires_in` runs out, then fetched again. Concurrent
 * calls share one fetch. A token the server refused (401) is dropped, so the next call fetches.
 */
import { CobroError } from "../CobroError.js"

export interface Credentials {
  /** The merchant's `user_id` (the path of `POST /users/{id}/tokens`). */
  readonly userId: string
  readonly clientId: string
  readonly clientSecret: string
}

export interface TokenSource {
  /**
   * A token to send; fetched when there is none or it is about to expire. One fetch serves every
   * caller waiting, so no one caller's abort signal cancels it.
   */
  readonly get: () => Promise<string>
  /** Forgets `token` (the server refused it) unless a newer one replaced it already. */
  readonly invalidate: (token: string) => void
  /** Whether `invalidate` + `get` can give another token (false for a fixed token). */
  readonly refreshable: boolean
}

/** A token given by the host (a partner's `PAR-` token, say): sent as is, never refreshed. */
export const fixed = (token: string): TokenSource => ({
  get: () => Promise.resolve(token),
  invalidate: () => {},
  refreshable: false
})

/**
 * How long before its expiry a token is replaced: a tenth of its lifetime, at most a minute, so a
 * request sent just before the expiry does not arrive just after it.
 */
export const marginOf = (lifetimeMs: number) => Math.min(60_000, lifetimeMs / 10)

interface Held {
  readonly token: string
  /** Local time after which the token is not used any more (its expiry less the margin). */
  readonly renewAt: number
}

/**
 * Tokens from `credentials`. `issue` sends the token request (through the client's transport, with
 * its retries) and answers the parsed response; `now` is the local clock in milliseconds.
 */
export const fromCredentials = (
  issue: () => Promise<{ readonly status: number; readonly body: unknown }>,
  describe: { readonly method: string; readonly url: string },
  now: () => number
): TokenSource => {
  let held: Held | undefined
  let pending: Promise<Held> | undefined

  const fetchToken = async (): Promise<Held> => {
    const requestedAt = now()
    const { status, body } = await issue()
    const data = (body as { data?: { token?: unknown; expires_in?: unknown } } | null)?.data
    if (status !== 200 || typeof data?.token !== "string") {
      throw new CobroError({ status, body, ...describe })
    }
    const lifetimeMs = typeof data.expires_in === "number" ? data.expires_in * 1000 : Infinity
    // From when the request left: the server's clock started the lifetime no earlier than that.
    return { token: data.token, renewAt: requestedAt + lifetimeMs - marginOf(lifetimeMs) }
  }

  return {
    refreshable: true,
    get: async () => {
      if (held !== undefined && now() < held.renewAt) return held.token
      if (pending === undefined) {
        const started = fetchToken()
        pending = started
        started.then(
          (fresh) => {
            held = fresh
          },
          () => {}
        )
        started
          .finally(() => {
            if (pending === started) pending = undefined
          })
          .catch(() => {})
      }
      return (await pending).token
    },
    invalidate: (token) => {
      if (held?.token === token) held = undefined
    }
  }
}
