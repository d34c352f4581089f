/**
 * Driving the dashboard over real HTTP in tests: a cookie jar, a form post that carries the page's
 * CSRF token, and signing in.
 */
import * as http from "node:http"

export interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** The cookies of one browser: what `Set-Cookie` stored, sent back on the next request. */
export class Jar {
  readonly cookies = new Map<string, string>()
  /** Every `Set-Cookie` line seen, for checking their attributes. */
  readonly lines: Array<string> = []
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
  }
  store(headers: http.IncomingHttpHeaders): void {
    for (const line of headers["set-cookie"] ?? []) {
      this.lines.push(line)
      const [pair] = line.split(";")
      const eq = pair!.indexOf("=")
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      if (value === "" || /max-age=0\b/i.test(line)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }
}

export const send = (jar: Jar, url: string, method = "GET", form?: Record<string, string>): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const body = form === undefined ? undefined : new URLSearchParams(form).toString()
    const request = http.request(
      url,
      {
        method,
        headers: {
          ...(jar.cookies.size === 0 ? {} : { cookie: jar.header() }),
          ...(body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" })
        }
      },
      (response) => {
        let text = ""
        response.on("data", (chunk: Buffer) => (text += chunk.toString()))
        response.on("end", () => {
          jar.store(response.headers)
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text })
        })
      }
    )
    request.on("error", reject)
    request.end(body)
  })

/** The CSRF token in a page's forms. */
export const csrfOf = (page: string): string => {
  const match = /name="csrf_token" value="([^"]+)"/.exec(page)
  if (match === null) throw new Error("no CSRF token in the page")
  return match[1]!
}

/** Signs in on `base` as `email`; the answer of the form's POST. */
export const signIn = async (
  jar: Jar,
  base: string,
  fields: Record<string, string>,
  path = "/dashboard/sign-in"
): Promise<Answer> => {
  const page = await send(jar, `${base}${path}`)
  return send(jar, `${base}${path}`, "POST", { csrf_token: csrfOf(page.body), ...fields })
}
