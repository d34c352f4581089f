/**
 * `Schema.Class` with its constructor's validation compiled once per class, and its instances
 * built without Effect's constructor.
 *
 * Effect's class constructor validates its argument with `ParseResult.validateSync` on the type
 * side of the fields, and derives that type side (`SchemaAST.typeAST`) anew on every call: for
 * fields that are transformations (timestamps, amounts as text) the derived AST is a new object
 * each time, so the parser cache misses and the validator is recompiled per construction: the
 * largest share of the engine's CPU per payment created or transfer credited. This constructor validates with the same schema (the fields' struct, or the
 * refined struct the class was declared with) through a validator compiled on first use: same
 * checks, same `ParseError` on bad input; an order of magnitude faster.
 *
 * Effect's constructor then copies the properties and looks for constructor defaults field by
 * field on every construction, checked or not (for `Money`, built on every sum, most of its
 * cost), before its base (`Data.Class`) assigns them to the instance. This constructor assigns
 * the properties, once, to a new instance of the class being constructed (`new.target`, the
 * declared subclass): the same own properties on the same prototype chain, so
 * equality, hashing, `instanceof`, the class's getters and Schema's decode and encode (which
 * construct through it) are Effect's. A function rather than a `class`: a class extending
 * Effect's would have to call its constructor; the subclass's `super(…)` takes the object this
 * one returns.
 *
 * Only for classes without constructor defaults (none in cobro: Effect's constructor would have
 * filled them in).
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
    function Checked(this: unknown, props: unknown = {}, options?: MakeOptions): object {
      if (new.target === undefined)
        throw new TypeError(`Class constructor ${identifier} cannot be invoked without 'new'`)
      const checked = validationDisabled(options)
        ? props
        : (validate ??= ParseResult.validateSync(schema as Schema.Schema<unknown, unknown, never>))(props)
      // What Effect's base (`Data.Class`) does to the instance; `Reflect.construct` of that base
      // on `new.target` measured several times slower.
      return Object.assign(Object.create(new.target.prototype), checked)
    }
    // Effect's statics (`ast`, `fields`, `make`, `extend`…) by inheritance, as with `extends`.
    Object.setPrototypeOf(Checked, Base)
    Checked.prototype = Object.create(Base.prototype, {
      constructor: { value: Checked, writable: true, configurable: true }
    })
    return Checked
  }) as any
/* eslint-enable @typescript-eslint/no-explicit-any */
