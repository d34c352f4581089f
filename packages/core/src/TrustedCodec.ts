/**
 * A schema's conversions without its checks, compiled once from the schema's AST: the fast path
 * of a codec whose input is already known to be valid (a domain value the engine built, a row it
 * wrote). The schema stays the one truth: every conversion it declares (transformations, property
 * signature transformations, class construction, member choice of a union) is the schema's own
 * function, called directly; what is left out is the work that only checks (refinements,
 * `instanceof` and key checks of declarations, excess-key handling, error collection).
 *
 * Decoding builds domain classes as the schema does (`Schema.Class` decodes with its constructor's
 * validation off), so a compiled decoder is only for input written by the same schema's encoding.
 * A declaration with type parameters that convert (an `Option` of a transformed value, say) is
 * left to the schema's own parser, as is a type literal with index signatures.
 */
import { Effect, Either, Option, ParseResult, Schema, SchemaAST as AST } from "effect"

/* eslint-disable @typescript-eslint/no-explicit-any */
type Run = (input: any) => any

/** `undefined` is the identity: a node that only checks compiles to nothing. */
type Compiled = Run | undefined

const options: AST.ParseOptions = {}

/** The value of a transformation's result (an `Either` as the schema's functions answer). */
const valueOf = (result: any): unknown => {
  if (result._tag === "Right" && "right" in result) return result.right
  if (Either.isEither(result)) {
    if (Either.isRight(result)) return result.right
    throw new ParseResult.ParseError({ issue: result.left as ParseResult.ParseIssue })
  }
  return Effect.runSync(
    Effect.mapError(
      result as Effect.Effect<unknown, ParseResult.ParseIssue>,
      (issue) => new ParseResult.ParseError({ issue })
    )
  )
}

const slow = (ast: AST.AST, decoding: boolean): Run => {
  const schema = Schema.make(ast)
  return decoding ? ParseResult.decodeUnknownSync(schema) : ParseResult.encodeUnknownSync(schema)
}

/** A `Schema.Class` declaration (known by its surrogate, the struct of its fields). */
const isClass = (ast: AST.AST): boolean =>
  ast._tag === "Declaration" && Option.isSome(AST.getSurrogateAnnotation(ast))

const then = (first: Compiled, second: Compiled): Compiled =>
  first === undefined ? second : second === undefined ? first : (input) => second(first(input))

const has = (input: object, key: PropertyKey): boolean => Object.prototype.hasOwnProperty.call(input, key)

interface Field {
  readonly name: PropertyKey
  readonly optional: boolean
  readonly run: Compiled
  /** The property signature transformation that gives this key its value (same key both sides). */
  readonly pst?: ((o: Option.Option<unknown>) => Option.Option<unknown>) | undefined
}

const fieldsOf = (ast: AST.TypeLiteral, decoding: boolean): ReadonlyArray<Field> =>
  ast.propertySignatures.map((ps) => ({
    name: ps.name,
    optional: ps.isOptional,
    run: compile(ps.type, decoding)
  }))

/**
 * A type literal's output: its keys in the schema's order (an optional one only when present).
 * Generated as a function of its own once (`new Function`), each key read and written by name,
 * so each access is monomorphic as in a hand-written encoder; the field's conversions are the
 * compiled ones, passed in.
 */
const build = (fields: ReadonlyArray<Field>): Run => {
  if (fields.some((field) => typeof field.name !== "string")) return buildGeneric(fields)
  const lines = fields.map((field, i) => {
    const key = JSON.stringify(field.name)
    const converted = (value: string) => (field.run === undefined ? value : `runs[${i}](${value})`)
    if (field.pst === undefined) {
      const assign = `out[${key}] = ${converted(`input[${key}]`)};`
      return field.optional ? `if (has(input, ${key})) ${assign}` : assign
    }
    const read = `o = psts[${i}](has(input, ${key}) ? some(input[${key}]) : none());`
    return field.optional
      ? `${read} if (o._tag === "Some") out[${key}] = ${converted("o.value")};`
      : `${read} out[${key}] = ${converted('o._tag === "Some" ? o.value : undefined')};`
  })
  const body = `return (input) => { const out = {}; let o; ${lines.join(" ")} return out }`
  return new Function("runs", "psts", "has", "some", "none", body)(
    fields.map((field) => field.run),
    fields.map((field) => field.pst),
    has,
    Option.some,
    Option.none
  ) as Run
}

/** `build` for keys that are symbols: the same, by a loop. */
const buildGeneric =
  (fields: ReadonlyArray<Field>): Run =>
  (input) => {
    const out: Record<PropertyKey, unknown> = {}
    for (const { name, optional, pst, run } of fields) {
      let value: unknown
      if (pst === undefined) {
        if (optional && !has(input, name)) continue
        value = input[name]
      } else {
        const o = pst(has(input, name) ? Option.some(input[name]) : Option.none())
        if (Option.isNone(o) && optional) continue
        value = Option.getOrUndefined(o)
      }
      out[name] = run === undefined ? value : run(value)
    }
    return out
  }

const typeLiteral = (ast: AST.TypeLiteral, decoding: boolean): Compiled =>
  ast.indexSignatures.length > 0 ? slow(ast, decoding) : build(fieldsOf(ast, decoding))

/**
 * A struct whose fields' property signature transformations keep their keys (`optionalWith`,
 * `optionalToRequired`): one pass that reads each key, transforms it and builds the other side,
 * rather than building the first side, renaming keys, and building the other. The first side is
 * built only when it converts something (its keys are dropped by the second side anyway).
 */
const typeLiteralTransformation = (
  ast: AST.Transformation,
  kind: AST.TypeLiteralTransformation,
  decoding: boolean
): Compiled => {
  const source = (decoding ? ast.from : ast.to) as AST.TypeLiteral
  const target = (decoding ? ast.to : ast.from) as AST.TypeLiteral
  const psts = kind.propertySignatureTransformations
  if (
    source.indexSignatures.length > 0 ||
    target.indexSignatures.length > 0 ||
    psts.some((pst) => pst.from !== pst.to)
  )
    return undefined
  const converts = fieldsOf(source, decoding).some((field) => field.run !== undefined)
  const first = converts ? compile(source, decoding) : undefined
  const second = build(
    fieldsOf(target, decoding).map((field) => {
      const pst = psts.find((t) => t.to === field.name)
      return pst === undefined ? field : { ...field, pst: decoding ? pst.decode : pst.encode }
    })
  )
  return then(first, second)
}

const transformation = (ast: AST.Transformation, decoding: boolean): Compiled => {
  const kind = ast.transformation
  if (kind._tag === "TypeLiteralTransformation") {
    const fused = typeLiteralTransformation(ast, kind, decoding)
    if (fused !== undefined) return fused
  }
  const before = compile(decoding ? ast.from : ast.to, decoding)
  const after = compile(decoding ? ast.to : ast.from, decoding)
  let step: Compiled
  switch (kind._tag) {
    case "ComposeTransformation":
      step = undefined
      break
    case "FinalTransformation": {
      const f = decoding ? kind.decode : kind.encode
      // A class's own transformation encodes its instance as it is (the fields' struct follows).
      step =
        !decoding && isClass(ast.to) && Option.isSome(AST.getSurrogateAnnotation(ast))
          ? undefined
          : (input) => valueOf(f(input, options, ast, input))
      break
    }
    case "TypeLiteralTransformation": {
      const steps = kind.propertySignatureTransformations.map((pst) => ({
        from: decoding ? pst.from : pst.to,
        to: decoding ? pst.to : pst.from,
        f: decoding ? pst.decode : pst.encode
      }))
      step = (input) => {
        const out = { ...input }
        for (const { f, from, to } of steps) {
          const o = f(has(out, from) ? Option.some(out[from]) : Option.none())
          delete out[from]
          if (Option.isSome(o)) out[to] = o.value
        }
        return out
      }
    }
  }
  return then(then(before, step), after)
}

const tuple = (ast: AST.TupleType, decoding: boolean): Compiled => {
  if (ast.elements.length > 0 || ast.rest.length !== 1) return slow(ast, decoding)
  const run = compile(ast.rest[0]!.type, decoding)
  return run === undefined ? (input: ReadonlyArray<unknown>) => input.slice() : (input) => input.map(run)
}

/** The JavaScript kind a side of a schema admits, where one kind says it (else `undefined`). */
const kindOf = (ast: AST.AST): string | undefined => {
  switch (ast._tag) {
    case "Refinement":
      return kindOf(ast.from)
    case "StringKeyword":
    case "TemplateLiteral":
      return "string"
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "boolean"
    case "BigIntKeyword":
      return "bigint"
    case "UndefinedKeyword":
      return "undefined"
    case "TypeLiteral":
      return "object"
    case "TupleType":
      return "array"
    default:
      return undefined
  }
}

const ofKind: Record<string, (input: unknown) => boolean> = {
  object: (input) => typeof input === "object" && input !== null && !Array.isArray(input),
  array: Array.isArray
}

/**
 * Which member a value belongs to. The input is valid, so a member that is the only one of its
 * kind (a literal, the one string, the one struct, the one array) is told by its kind; others by
 * the schema's guard of that side.
 */
const guardOf = (side: AST.AST, kinds: ReadonlyArray<string | undefined>): ((input: unknown) => boolean) => {
  const bare = side._tag === "Refinement" ? side.from : side
  if (bare._tag === "Literal") return (input) => input === bare.literal
  const kind = kindOf(side)
  if (kind !== undefined && kinds.filter((k) => k === kind).length === 1)
    return ofKind[kind] ?? ((input) => typeof input === kind)
  return Schema.is(Schema.make(side))
}

const union = (ast: AST.Union, decoding: boolean): Compiled => {
  const sides = ast.types.map((member) => (decoding ? AST.encodedAST(member) : AST.typeAST(member)))
  const kinds = sides.map(kindOf)
  const members = ast.types.map((member, i) => ({
    is: guardOf(sides[i]!, kinds),
    run: compile(member, decoding)
  }))
  if (members.every((m) => m.run === undefined)) return undefined
  let otherwise: Run | undefined
  return (input) => {
    for (const { is, run } of members) if (is(input)) return run === undefined ? input : run(input)
    return (otherwise ??= slow(ast, decoding))(input)
  }
}

/**
 * A declaration's value is on its type side already: a class's instance (a `Schema.Class`
 * declaration, known by its surrogate, only checks `instanceof`), or a value whose type
 * parameters convert nothing. One whose parameters convert is the schema's to parse.
 */
const declaration = (ast: AST.Declaration, decoding: boolean): Compiled =>
  isClass(ast) || ast.typeParameters.every((parameter) => compile(parameter, decoding) === undefined)
    ? undefined
    : slow(ast, decoding)

const compiled = [new WeakMap<AST.AST, Compiled>(), new WeakMap<AST.AST, Compiled>()] as const

/** Each node compiled once a direction: a class or a field schema used in many places is shared. */
const compile = (ast: AST.AST, decoding: boolean): Compiled => {
  const cache = compiled[decoding ? 1 : 0]
  if (cache.has(ast)) return cache.get(ast)
  const run = compileNode(ast, decoding)
  cache.set(ast, run)
  return run
}

const compileNode = (ast: AST.AST, decoding: boolean): Compiled => {
  switch (ast._tag) {
    case "Refinement":
      return compile(ast.from, decoding)
    case "Transformation":
      return transformation(ast, decoding)
    case "TypeLiteral":
      return typeLiteral(ast, decoding)
    case "TupleType":
      return tuple(ast, decoding)
    case "Union":
      return union(ast, decoding)
    case "Declaration":
      return declaration(ast, decoding)
    case "Suspend": {
      let run: Run | undefined
      return (input) => (run ??= compile(ast.f(), decoding) ?? ((x: unknown) => x))(input)
    }
    default:
      return undefined
  }
}

const identity = <A>(a: A): A => a

/**
 * `schema`'s encoding without its checks: `value` must be a valid `A` (one the domain built). Keys
 * come in the schema's order, so the JSON text is the schema's.
 */
export const encoder = <A, I, R>(schema: Schema.Schema<A, I, R>): ((value: A) => I) =>
  compile(schema.ast, false) ?? identity

/**
 * `schema`'s decoding without its checks: `encoded` must be what `schema` encoded (a stored row
 * the engine wrote through it), never input from outside.
 */
export const decoder = <A, I, R>(schema: Schema.Schema<A, I, R>): ((encoded: I) => A) =>
  compile(schema.ast, true) ?? identity
