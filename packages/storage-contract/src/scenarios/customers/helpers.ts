/** The records, requests and engine steps the customers scenarios share. */
import { BankAccount, Customer, Ids } from "@cobro/core"
import { CustomerRepository } from "@cobro/core/ports"
import { Effect, Option } from "effect"

export const cid = (s: string) => Customer.CustomerId.make(s)
export const cvu = (n: number) => BankAccount.makeCvu("0000003", String(n).padStart(13, "0"))
export const alias = (s: string) => BankAccount.Alias.make(s)

export const stored = (owner: Ids.UserId, id: string) =>
  Effect.flatMap(CustomerRepository.CustomerRepository, (r) =>
    Effect.map(r.findById(owner, cid(id)), Option.getOrThrow)
  )
