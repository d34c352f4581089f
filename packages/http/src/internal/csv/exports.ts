/**
 * The CSV exports: for an authorized principal and an export's filters, the streaming HTTP
 * response (or, before any byte, the domain error that refuses it). Rows are read from storage
 * in keyset pages and each page is written as one piece of the body, so an export of any length
 * is sent in constant memory (`bench/exports.ts` measures it).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  Balances,
  type Customer,
  Customers,
  Errors,
  type Ids,
  type MerchantMoney,
  type Page,
  type Payment,
  Payments,
  type Principal,
  type Refund,
  Refunds
} from "@cobro/core"
import { Chunk, DateTime, Effect, Option, Stream } from "effect"
import type * as Api from "../api/exports.js"
import { cutOnFailure } from "../handlers/streamedList.js"
import * as Columns from "./columns.js"
import { type Column, header, records } from "./encode.js"

/** Rows per storage page of the paged lists (their routes' largest `limit`). */
const PAGE = 100

/** What an export answers: its response, or the domain error that refused it before any byte. */
export type Export<R> = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  Errors.DomainError,
  R | HttpServerRequest.HttpServerRequest
>

interface Range {
  readonly start_date?: DateTime.Utc | undefined
  readonly end_date?: DateTime.Utc | undefined
}

const checkRange = (range: Range) =>
  range.start_date !== undefined &&
  range.end_date !== undefined &&
  DateTime.greaterThan(range.start_date, range.end_date)
    ? Effect.fail(Errors.InvalidInput.of("start_date", "must not be after end_date"))
    : Effect.void

const own = (principal: Principal.Principal, user_id: Ids.UserId | undefined) =>
  user_id === undefined || user_id === principal.user_id
    ? Effect.void
    : Effect.fail(Errors.NotFound.of("user", user_id))

/**
 * The items of a newest-first keyset list, its first page read now (so that a refusal is an
 * error before the response) and the others as the body is written.
 */
const newestFirst = <A, E, R>(
  read: (before: Option.Option<Page.Cursor>) => Effect.Effect<Page.Page<A>, E, R>
): Effect.Effect<Stream.Stream<A, E, R>, E, R> =>
  Effect.map(read(Option.none()), (first) =>
    Stream.fromChunk(Chunk.fromIterable(first.items)).pipe(
      Stream.concat(
        Option.match(first.next, {
          onNone: () => Stream.empty,
          onSome: (cursor) =>
            Stream.paginateChunkEffect(cursor, (before) =>
              Effect.map(
                read(Option.some(before)),
                (page) => [Chunk.fromIterable(page.items), page.next] as const
              )
            )
        })
      )
    )
  )

/**
 * A newest-first list cut to `range` by creation time: the newer items skipped, the reading
 * stopped at the first item older than `start_date`.
 */
const within =
  <A>(range: Range, createdAt: (a: A) => DateTime.Utc) =>
  <E, R>(items: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> => {
    const { start_date: start, end_date: end } = range
    const newer =
      end === undefined ? items : Stream.dropWhile(items, (a) => DateTime.greaterThan(createdAt(a), end))
    return start === undefined
      ? newer
      : Stream.takeWhile(newer, (a) => !DateTime.lessThan(createdAt(a), start))
  }

const safeName = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, "_")

/**
 * The response: `text/csv`, an attachment named `cobro-<name>-<user>-<UTC time>.csv`, never
 * cached; the header row, then each storage page's records as one piece of the body. A failure
 * once the body began is logged and cuts the connection (`cutOnFailure`).
 */
const respond = <A, E>(
  name: string,
  user_id: Ids.UserId,
  columns: ReadonlyArray<Column<A>>,
  rows: Stream.Stream<A, E>
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const now = yield* DateTime.now
    const stamp = DateTime.formatIso(now)
      .replace(/\.\d+Z$/, "Z")
      .replace(/[-:]/g, "")
    const filename = `cobro-${name}-${safeName(user_id)}-${stamp}.csv`
    const body = Stream.make(header(columns)).pipe(
      Stream.concat(
        rows.pipe(
          Stream.orDie,
          Stream.chunks,
          Stream.filter(Chunk.isNonEmpty),
          Stream.map((chunk) => records(columns, chunk))
        )
      ),
      cutOnFailure(request, `its ${name} export`),
      Stream.encodeText
    )
    return HttpServerResponse.stream(body, {
      contentType: "text/csv; charset=utf-8; header=present",
      headers: {
        "content-disposition": `attachment; filename="${filename}"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff"
      }
    })
  })

/**
 * The principal's payments as GET /payments/ lists them (its filters, and `payment_status`),
 * oldest first. `where`: a host page's own further filter (a text search), applied as rows are read.
 */
export const payments = (
  principal: Principal.Principal,
  filters: typeof Api.PaymentsExportParams.Type,
  where?: (payment: Payment.Payment) => boolean
): Export<Payments.Payments> =>
  Effect.gen(function* () {
    yield* own(principal, filters.user_id)
    yield* checkRange(filters)
    const service = yield* Payments.Payments
    const status = filters.payment_status
    const rows = service
      .list(principal.user_id, filters)
      .pipe(
        status === undefined ? (s) => s : Stream.filter((p) => p.payment_status === status),
        where === undefined ? (s) => s : Stream.filter(where)
      )
    return yield* respond("payments", principal.user_id, Columns.payment, rows)
  })

/** A fixed customer's transactions, newest first; another merchant's customer is not found. */
export const customerTransactions = (
  principal: Principal.Principal,
  customer_id: Customer.CustomerId,
  filters: typeof Api.TransactionsExportParams.Type
): Export<Customers.Customers> =>
  Effect.gen(function* () {
    yield* checkRange(filters)
    const service = yield* Customers.Customers
    const rows = yield* newestFirst((before) =>
      service.listTransactions(principal.user_id, customer_id, before, PAGE)
    )
    return yield* respond(
      "transactions",
      principal.user_id,
      Columns.customerTransaction,
      within<Customer.CustomerTransaction>(filters, (t) => t.creation_timestamp)(rows)
    )
  })

/** The principal's payouts as GET /transactions/payouts lists them (`kind`), newest first. */
export const payouts = (
  principal: Principal.Principal,
  filters: typeof Api.PayoutsExportParams.Type
): Export<Balances.Balances> =>
  Effect.gen(function* () {
    yield* own(principal, filters.user_id)
    yield* checkRange(filters)
    const service = yield* Balances.Balances
    const rows = yield* newestFirst((before) =>
      service.payouts(principal.user_id, principal.user_id, {
        kind: filters.kind,
        before: Option.getOrUndefined(before),
        limit: PAGE
      })
    )
    return yield* respond(
      "payouts",
      principal.user_id,
      Columns.payout,
      within<MerchantMoney.MerchantPayout>(filters, (p) => p.creation_timestamp)(rows)
    )
  })

/** The principal's refunds, newest first: every payment's, or `payment_id`'s. */
export const refunds = (
  principal: Principal.Principal,
  filters: typeof Api.RefundsExportParams.Type
): Export<Refunds.Refunds> =>
  Effect.gen(function* () {
    yield* own(principal, filters.user_id)
    yield* checkRange(filters)
    const service = yield* Refunds.Refunds
    const rows =
      filters.payment_id === undefined
        ? yield* newestFirst((before) => service.page(principal.user_id, principal.user_id, before, PAGE))
        : Stream.fromIterable([...(yield* service.list(principal.user_id, filters.payment_id))].reverse())
    return yield* respond(
      "refunds",
      principal.user_id,
      Columns.refund,
      within<Refund.Refund>(filters, (r) => r.creation_timestamp)(rows)
    )
  })
