/**
 * `Schema.Class` with its constructor's validation compiled once per class.
 *
 * Effect's class constructor validates its argument with `ParseResult.validateSync` on the type
 * side of the fields, and derives that type side (`SchemaAST.typeAST`) anew on every call: for
 * fields that are transformations (timestamps, amounts as text) the derived AST is a new object
 * each time, so the parser cache misses and the validator is recompiled per construction: the
 * largest share of the engine's CPU per payment created or transfer credited (figures in
 * bench/results.md). This wrapper validates with the same schema (the fields' struct, or the
 * refined struct the class was declared with) through a validator compiled on first use, then
 * hands the validated properties to Effect's constructor with its own validation off. Same
 * checks, same `ParseError` on bad input; an order of magnitude faster.
 *
 * Only for classes without constructor defaults (none in cobro: defaults would be merged by
 * Effect's constructor after this validation).
 */
import { ParseResult, Schema } from "effect"

type MakeOptions = boolean | { readonly disableValidation?: boolean } | undefined

const validationDisabled = (options: MakeOptions): boolean =>
  typeof options === "boolean" ? options : options?.disableValidation === true

// Typed as `Schema.Class` itself: the factory is generic over `Self` and the fields, and returns
// Effect's class unchanged but for the constructor.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const Class: typeof Schema.Class = ((identifier: string) =>
  (fieldsOr: Schema.Struct.Fields | Schema.Schema.Any, annotations?: unknown) => {
    const Base = (Schema.Class as any)(identifier)(fieldsOr, annotations)
    const schema = Schema.isSchema(fieldsOr) ? fieldsOr : Schema.Struct(fieldsOr)
    let validate: ((u: unknown) => unknown) | undefined
    return class extends Base {
      constructor(props: unknown = {}, options?: MakeOptions) {
        if (validationDisabled(options)) {
          super(props, true)
        } else {
          validate ??= ParseResult.validateSync(schema as Schema.Schema<unknown, unknown, never>)
          super(validate(props), true)
        }
      }
    }
  }) as any
/* eslint-enable @typescript-eslint/no-explicit-any */
