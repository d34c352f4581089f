/**
 * Decoding of untrusted input into a request schema, failing with `InvalidInput` that names the
 * first offending field (dotted path) and the rule it breaks.
 */
import { Effect, ParseResult, Schema } from "effect"
import { InvalidInput } from "../Errors.js"

export const decodeInput =
  <A, I>(schema: Schema.Schema<A, I>) =>
  (input: unknown): Effect.Effect<A, InvalidInput> =>
    Schema.decodeUnknown(schema, { errors: "first", onExcessProperty: "ignore" })(input).pipe(
      Effect.mapError((error) => {
        const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
        const field =
          issue === undefined || issue.path.length === 0 ? "body" : issue.path.map(String).join(".")
        return InvalidInput.of(field, issue?.message ?? "is invalid")
      })
    )
