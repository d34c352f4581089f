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
const valueOf = (result: unknown): unknown => {
  if (Either.isEither(result)) {
    if (Either.isRight(result)) return result.right
    throw new ParseResult.ParseError({ issue: result.left as ParseResult.ParseIssue })
  }
  return Effect.runSync(
    Effect.mapError(result as Effect.Effect<unknown, ParseResult.ParseIssue>, (issue) => new ParseResult.ParseError({ issue }))
  )
}

const slow = (ast: AST.AST, decoding: boolean): Run => {
  const schema = Schema.make(ast)
  return decoding ? ParseResult.decodeUnknownSync(schema) : ParseResult.encodeUnknownSync(schema)
}

const then = (first: Compiled, second: Compiled): Compiled =>
  first === undefined ? second : second === undefined ? first : (input) => second(first(input))

const transformation = (ast: AST.Transformation, decoding: boolean): Compiled => {
  const before = compile(decoding ? ast.from : ast.to, decoding)
  const after = compile(decoding ? ast.to : ast.from, decoding)
  const kind = ast.transformation
  let step: Compiled
  switch (kind._tag) {
    case "ComposeTransformation":
      step = undefined
      break
    case "FinalTransformation": {
      const f = decoding ? kind.decode : kind.encode
      step = (input) => valueOf(f(input, options, ast, input))
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
          const o = f(Object.prototype.hasOwnProperty.call(out, from) ? Option.some(out[from]) : Option.none())
          delete out[from]
          if (Option.isSome(o)) out[to] = o.value
        }
        return out
      }
    }
  }
  return then(then(before, step), after)
}

const typeLiteral = (ast: AST.TypeLiteral, decoding: boolean): Compiled => {
  if (ast.indexSignatures.length > 0) return slow(ast, decoding)
  const fields = ast.propertySignatures.map((ps) => ({
    name: ps.name,
    optional: ps.isOptional,
    run: compile(ps.type, decoding)
  }))
  return (input) => {
    const out: Record<PropertyKey, unknown> = {}
    for (const { name, optional, run } of fields) {
      if (optional && !Object.prototype.hasOwnProperty.call(input, name)) continue
      out[name] = run === undefined ? input[name] : run(input[name])
    }
    return out
  }
}

const tuple = (ast: AST.TupleType, decoding: boolean): Compiled => {
  if (ast.elements.length > 0 || ast.rest.length !== 1) return slow(ast, decoding)
  const run = compile(ast.rest[0]!.type, decoding)
  return run === undefined ? (input: ReadonlyArray<unknown>) => input.slice() : (input) => input.map(run)
}

const union = (ast: AST.Union, decoding: boolean): Compiled => {
  const members = ast.types.map((member) => ({
    is: Schema.is(Schema.make(decoding ? AST.encodedAST(member) : AST.typeAST(member))),
    run: compile(member, decoding)
  }))
  if (members.every((m) => m.run === undefined)) return undefined
  let otherwise: Run | undefined
  return (input) => {
    for (const { is, run } of members) if (is(input)) return run === undefined ? input : run(input)
    return (otherwise ??= slow(ast, decoding))(input)
  }
}

const declaration = (ast: AST.Declaration, decoding: boolean): Compiled =>
  ast.typeParameters.every((parameter) => compile(parameter, decoding) === undefined)
    ? undefined
    : slow(ast, decoding)

const compile = (ast: AST.AST, decoding: boolean): Compiled => {
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
