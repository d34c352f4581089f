/** What every BIND operation reads of an answer, whatever the call. */
import type { BankProvider } from "@cobro/core"
import { Effect, Schema } from "effect"
import { type Answer, bankError } from "./client.js"

export const ok = (answer: Answer) => answer.status >= 200 && answer.status < 300

/** Decodes a value the bank reports with one of core's schemas; a mismatch is a bad answer. */
export const reported = <A, I>(
  schema: Schema.Schema<A, I>,
  value: unknown,
  what: string
): Effect.Effect<A, BankProvider.BankError> =>
  Schema.decodeUnknown(schema)(value).pipe(
    Effect.mapError(() => bankError("unavailable", `BIND reported an invalid ${what}: ${String(value)}`))
  )
