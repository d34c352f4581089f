// Module resolution hook for running cobro from a source checkout: resolves the workspace's
// packages to their TypeScript sources (the `@cobro/source` export condition), as
// `node --conditions=@cobro/source` would.
export async function resolve(specifier, context, nextResolve) {
  const conditions = context.conditions.includes("@cobro/source")
    ? context.conditions
    : [...context.conditions, "@cobro/source"]
  return nextResolve(specifier, { ...context, conditions })
}
