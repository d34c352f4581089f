/**
 * How a customer and its transactions are stored in `cobro_customers.doc` and
 * `cobro_customer_transactions.doc`.
 */
import { Customer as C } from "@cobro/core"

/** A customer's document (its balance lives in its column: the document holds zero). */
export const Customer = C.Customer

/** A customer transaction's document. */
export const CustomerTransaction = C.CustomerTransaction
