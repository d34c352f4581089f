/**
 * The `customers` routes: a merchant's customers (each with its own CVU), their aliases, the
 * list and one customer's transactions.
 */
import { Customer, Customers, Idempotency } from "@cobro/core"
import { Effect, Option, Stream } from "effect"
import { ok } from "../../Envelope.js"
import type { Authentication } from "../../Security.js"
import { pageOf } from "../api/shared.js"
import { asPrincipal, type GroupLive, group, ownList, idempotent } from "./shared.js"
import { streamedList } from "./streamedList.js"

export const CustomersLive: GroupLive<
  "customers",
  Customers.Customers | Idempotency.Idempotency | Authentication
> = group("customers", (handlers) =>
  Effect.gen(function* () {
    const customers = yield* Customers.Customers
    return handlers
      .handle(
        "create",
        idempotent("customers", "create", ({ payload }) =>
          asPrincipal((principal) =>
            Idempotency.answering(customers.create(principal.user_id, payload), (c) =>
              ok("customer.created", Customer.CustomerCreated.fromCustomer(c))
            )
          )
        )
      )
      .handle("changeAlias", ({ path, payload }) =>
        asPrincipal((principal) =>
          Effect.map(customers.changeAlias(principal.user_id, path.customer_id, payload), (c) =>
            ok("customer.alias.updated", Customer.CustomerAliasChanged.fromCustomer(c))
          )
        )
      )
      .handle("list", ({ urlParams }) =>
        asPrincipal((principal) =>
          Effect.zipRight(
            ownList(principal, urlParams.user_id),
            streamedList(
              "customers.found",
              "customers",
              Customer.CustomerSummary,
              Stream.map(
                customers.list(principal.user_id, urlParams.user_id),
                Customer.CustomerSummary.fromCustomer
              )
            )
          )
        )
      )
      .handle("get", ({ path }) =>
        asPrincipal((principal) =>
          Effect.map(customers.get(principal.user_id, path.customer_id), (c) =>
            ok("customer.found", Customer.CustomerView.fromCustomer(c))
          )
        )
      )
      .handle("listTransactions", ({ path, urlParams }) =>
        asPrincipal((principal) =>
          Effect.map(
            customers.listTransactions(
              principal.user_id,
              path.customer_id,
              Option.fromNullable(urlParams.cursor),
              urlParams.limit
            ),
            (page) => ok("customer.transactions.found", pageOf("transactions", page))
          )
        )
      )
      .handle("getTransaction", ({ path }) =>
        asPrincipal((principal) =>
          Effect.map(
            customers.getTransaction(principal.user_id, path.customer_id, path.transaction_id),
            (t) => ok("customer.transaction.found", t)
          )
        )
      )
  })
)
