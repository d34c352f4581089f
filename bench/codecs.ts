/**
 * The hot row and document codecs of `@cobro/sql`, each as its schema runs it (checking) beside
 * the same schema compiled without its checks (core's `TrustedCodec`, what the repositories
 * call): this process's CPU time per operation, after a warm-up. Not part of the tests.
 *
 *   npm run bench:codecs        (BENCH_N: operations per measure, 20000 unless told)
 */
import { TrustedCodec } from "@cobro/core/ports"
import { Schema } from "effect"
import * as Account from "../packages/sql/src/internal/documents/account.js"
import * as Documents from "../packages/sql/src/internal/documents/payment.js"
import { DeliveryRow } from "../packages/sql/src/internal/deliveries.js"
import { PaymentRow, row } from "../packages/sql/src/internal/paymentRow.js"
import { Doc } from "../packages/sql/src/internal/sql.js"
import { TransferRowIn } from "../packages/sql/src/SqlTransferRepository.js"
import { documents } from "../packages/sql/test/paymentDocuments.js"
import { delivery as deliveryOf, record, userDocument } from "../packages/sql/test/rowFixtures.js"

const N = Number(process.env["BENCH_N"] ?? 20000)

const micros = (f: () => unknown): number => {
  for (let i = 0; i < N; i++) f()
  const start = process.cpuUsage()
  for (let i = 0; i < N; i++) f()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / N
}

const paidDocument = documents["paid twice with commission, taxes and the totals"]!
const paid = Schema.decodeUnknownSync(Documents.Payment.validated)(paidDocument)
const stored = { v: 1, ...userDocument, transfer_tolerance: 12.5 }
const user = Schema.decodeUnknownSync(Account.User.validated)(stored)
const transfer = record({})
const delivery = deliveryOf({})

/** One codec, both ways it can run: [what, schema's (checking) run, compiled run]. */
const cases: ReadonlyArray<readonly [string, () => unknown, () => unknown]> = [
  (() => {
    // The row's schema with its document's checking codec (the row's own uses the compiled one).
    const Checking = Schema.Struct({ ...PaymentRow.fields, doc: Doc(Documents.Payment.validated) })
    const [checking, compiled] = [Schema.encodeSync(Checking), TrustedCodec.encoder(PaymentRow)]
    return ["payment row, encode (paid twice)", () => checking(row(paid)), () => compiled(row(paid))] as const
  })(),
  (() => {
    const [checking, compiled] = [
      Schema.decodeUnknownSync(Documents.Payment.validated),
      Schema.decodeUnknownSync(Documents.Payment)
    ]
    return ["payment document, decode", () => checking(paidDocument), () => compiled(paidDocument)] as const
  })(),
  (() => {
    const [checking, compiled] = [
      Schema.decodeUnknownSync(Account.User.validated),
      Schema.decodeUnknownSync(Account.User)
    ]
    return ["user document, decode", () => checking(stored), () => compiled(stored)] as const
  })(),
  (() => {
    const [checking, compiled] = [Schema.encodeSync(Account.User.validated), Schema.encodeSync(Account.User)]
    return ["user document, encode", () => checking(user), () => compiled(user)] as const
  })(),
  (() => {
    const [checking, compiled] = [Schema.encodeSync(TransferRowIn), TrustedCodec.encoder(TransferRowIn)]
    return ["transfer row, encode", () => checking(transfer), () => compiled(transfer)] as const
  })(),
  (() => {
    const [checking, compiled] = [Schema.encodeSync(DeliveryRow), TrustedCodec.encoder(DeliveryRow)]
    return ["delivery row, encode", () => checking(delivery), () => compiled(delivery)] as const
  })()
]

console.log("| codec | schema, checking: CPU µs | compiled (TrustedCodec): CPU µs | ratio |")
console.log("|---|---|---|---|")
for (const [what, checking, compiled] of cases) {
  const [slow, fast] = [micros(checking), micros(compiled)]
  console.log(`| ${what} | ${slow.toFixed(2)} | ${fast.toFixed(2)} | ${(slow / fast).toFixed(1)} |`)
}
