/** What every method of `Cobro` shares: per-call options, the answer or a `CobroError`, new keys. */
import { CobroError } from "../CobroError.js"

/** Per call: an `Idempotency-Key` of your own (POSTs; else one is generated), and cancellation. */
export interface CallOptions {
  /** Give the key your own retries use (an order id, say), so a repeat is answered, not redone. */
  readonly idempotencyKey?: string
  readonly signal?: AbortSignal
}

/** A random UUID (v4) from WebCrypto's `getRandomValues`, which browsers have on plain http too. */
export const randomKey = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** The answer's body, or a `CobroError` built from the error answer. */
export const unwrap = async <D, E>(
  call: Promise<{ data?: D; error?: E; response: Response }>
): Promise<Exclude<D, undefined> | (undefined extends D ? undefined : never)> => {
  const { data, error, response } = await call
  if (!response.ok) {
    throw new CobroError({
      status: response.status,
      body: error,
      method: methodOf(response),
      url: response.url,
      requestId: response.headers.get("request-id")
    })
  }
  return data as Exclude<D, undefined>
}

/** The method is not on a Response; the transport records it per response. */
const methods = new WeakMap<Response, string>()
const methodOf = (response: Response) => methods.get(response) ?? "request"

export const callInit = (options: CallOptions = {}) => ({
  ...(options.signal === undefined ? {} : { signal: options.signal }),
  ...(options.idempotencyKey === undefined ? {} : { headers: { "Idempotency-Key": options.idempotencyKey } })
})

export const recordMethod = (response: Response, method: string) => {
  methods.set(response, method)
}
