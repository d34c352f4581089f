/** The `customers` routes: fixed customers, each with its own CVU and alias. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Customer, Ids } from "@cobro/core"
import { Schema } from "effect"
import { Envelope } from "../../Envelope.js"
import { Authentication } from "../../Security.js"
import { EnvelopeErrors, IdempotencyHeaders, PageOf, PageParams, withExample } from "./shared.js"

export const ListCustomersParams = Schema.Struct({ user_id: Ids.UserId })

const customerId = Schema.Struct({ customer_id: Customer.CustomerId })

export class Customers extends HttpApiGroup.make("customers")
  .add(
    HttpApiEndpoint.post("create", "/customers/")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create a fixed customer",
          description:
            "A fixed customer has a permanent CVU and an alias made of the account's `alias_prefix` and the `alias` suffix; every transfer to it updates its balance and sends its webhook. Needs the account's alias prefix (400 `user.alias.prefix.not.set` without it)."
        })
      )
      .setPayload(
        withExample(Customer.CreateCustomerRequest, {
          user_id: "demo",
          alias: "cliente-1",
          customer_id: "customer-1",
          name: "Juana Pérez"
        })
      )
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Envelope(Customer.CustomerCreated))
  )
  .add(
    HttpApiEndpoint.patch("changeAlias", "/customers/:customer_id/alias")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change a fixed customer's alias",
          description:
            "With `create_new_cvu` true a new CVU is assigned and the old one released. With false the CVU is kept and the alias changed; when the bank refuses that, a new CVU is assigned instead."
        })
      )
      .setPath(customerId)
      .setPayload(withExample(Customer.ChangeAliasRequest, { alias: "cliente-1b", create_new_cvu: false }))
      .addSuccess(Envelope(Customer.CustomerAliasChanged))
  )
  .add(
    HttpApiEndpoint.get("list", "/customers/")
      .annotateContext(
        OpenApi.annotations({
          summary: "List a merchant's fixed customers",
          description:
            "Every fixed customer of `user_id` (the token's own account) with its bank data and balance."
        })
      )
      .setUrlParams(ListCustomersParams)
      .addSuccess(Envelope(Schema.Struct({ customers: Schema.Array(Customer.CustomerSummary) })))
  )
  .add(
    HttpApiEndpoint.get("get", "/customers/:customer_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a fixed customer",
          description:
            "The customer with its bank data (`bank_info`), `balance`, `contact` and `webhook_url` (left out when it has none) and its timestamps. Another merchant's customer is 404."
        })
      )
      .setPath(customerId)
      .addSuccess(Envelope(Customer.CustomerView))
  )
  .add(
    HttpApiEndpoint.get("listTransactions", "/customers/:customer_id/transactions")
      .annotateContext(
        OpenApi.annotations({
          summary: "List a fixed customer's transactions",
          description:
            "The transfers the customer sent, newest first, `limit` per page (1\u2013100, default 50). When more follow, `next_cursor` is present: send it back as `cursor` for the next page; it is absent on the last page."
        })
      )
      .setPath(customerId)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(Envelope(PageOf("transactions", Customer.CustomerTransaction)))
  )
  .add(
    HttpApiEndpoint.get("getTransaction", "/customers/:customer_id/transactions/:transaction_id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read a fixed customer's transaction",
          description:
            'One transfer a fixed customer received, with its amount, fees and date: what the "Customer payment received" webhook asks the receiver to confirm.'
        })
      )
      .setPath(Schema.Struct({ ...customerId.fields, transaction_id: Customer.CustomerTransactionId }))
      .addSuccess(Envelope(Customer.CustomerTransaction))
  )
  .addError(EnvelopeErrors)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Customers")
  .annotate(
    OpenApi.Description,
    "Fixed customers: a permanent CVU and alias per customer of the merchant."
  ) {}
