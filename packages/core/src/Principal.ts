/**
 * Who is calling. A user token acts for its user; a partner token acts for the one user it was
 * issued for. Every service operation is scoped to `principal.user_id`.
 */
import { Data } from "effect"
import type { PartnerId, UserId } from "./Ids.js"

export type Principal = Data.TaggedEnum<{
  User: { readonly user_id: UserId }
  Partner: { readonly user_id: UserId; readonly partner_id: PartnerId }
}>

export const Principal = Data.taggedEnum<Principal>()
