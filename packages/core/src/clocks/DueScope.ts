/**
 * Whose due work a query looks at. The background's pass over every merchant on real time leaves
 * out the merchants whose sandbox test clock runs ahead (`Everyone` with `except`); each of those
 * gets its own pass on its own clock (`Owner`), found by an index on `(owner, due time)`.
 */
import type { UserId } from "../Ids.js"

export type DueScope =
  | { readonly _tag: "Everyone"; readonly except: ReadonlyArray<UserId> }
  | { readonly _tag: "Owner"; readonly owner: UserId }

/** Every merchant's work. */
export const everyone: DueScope = { _tag: "Everyone", except: [] }

/** Every merchant's work but that of `except`. */
export const allBut = (except: ReadonlyArray<UserId>): DueScope => ({ _tag: "Everyone", except })

/** The work of `owner` only. */
export const only = (owner: UserId): DueScope => ({ _tag: "Owner", owner })

/** Whether work of `user` is in `scope` (for the memory adapters). */
export const includes = (scope: DueScope, user: string): boolean =>
  scope._tag === "Owner" ? scope.owner === user : !scope.except.includes(user as UserId)
