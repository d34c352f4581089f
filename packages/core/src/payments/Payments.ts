/**
 * One-off payments: creation with a dedicated CVU, reads, listing, and the merchant's changes
 * (expiry, price, motive). Incoming money arrives through `Transfers`, expiry through `Jobs`.
 */
import { Chunk, DateTime, Effect, Either, Metric, Option, Stream } from "effect"
import { BankProvider } from "../bank/BankProvider.js"
import { EngineConfig } from "../EngineConfig.js"
import { Conflict, NotPermitted, InvalidInput, NotFound, ProviderFailure, Discontinued } from "../Errors.js"
import { ExchangeRates } from "./ExchangeRates.js"
import { ExternalId, type PaymentId, PaymentId as PaymentIdSchema, type UserId } from "../Ids.js"
import { randomChars } from "../internal/ids.js"
import * as Metrics from "../Metrics.js"
import * as Money from "../Money.js"
import { Outbox } from "../webhooks/Outbox.js"
import * as P from "./Payment.js"
import { CreatePaymentRequest, type ExtendExpirationRequest, type RepriceRequest } from "./PaymentRequest.js"
import { type PaymentCursor, type PaymentQuery, PaymentRepository } from "./PaymentRepository.js"
import { emitPaymentUpdated, isClosed } from "./paymentEvents.js"
import * as StoreTogether from "./storeTogether.js"
import { fingerprint } from "./fingerprint.js"
import { Transactor } from "../Transactor.js"
import * as Idempotency from "../Idempotency.js"
import { paymentLifetime } from "../accounts/User.js"
import { UserRepository } from "../accounts/UserRepository.js"
import * as WebhookDestination from "../webhooks/WebhookDestination.js"
import { PublicRefunds } from "./PublicRefunds.js"
import * as Spans from "../Spans.js"

const PAGE_SIZE = 200

export class Payments extends Effect.Service<Payments>()("@cobro/core/Payments", {
  effect: Effect.gen(function* () {
    const repo = yield* PaymentRepository
    const users = yield* UserRepository
    const bank = yield* BankProvider
    const rates = yield* ExchangeRates
    const transactor = yield* Transactor
    const outbox = yield* Outbox
    const config = yield* EngineConfig
    const checkWebhookUrl = yield* WebhookDestination.checker
    const refunds = yield* PublicRefunds

    const bankFailure = (e: { message: string }) =>
      new ProviderFailure({
        key: "bank.unavailable",
        message: `the bank could not open an account: ${e.message}`
      })

    const findOwned = (owner: UserId, id: PaymentId, lock = false) =>
      (lock ? repo.findByIdForUpdate(id) : repo.findById(id)).pipe(
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(NotFound.of("payment", id)),
            onSome: (p) => (p.user_id === owner ? Effect.succeed(p) : Effect.fail(NotFound.of("payment", id)))
          })
        )
      )

    const existingFor = (request: CreatePaymentRequest, print: string, existing: P.Payment) =>
      existing.creation_request === print
        ? Effect.succeed(existing)
        : Effect.fail(
            new Conflict({
              key: "payment.external_id.conflict",
              message: `external_id ${existing.external_id} was already used for a different payment of user ${request.user_id}`
            })
          )

    const together = StoreTogether.make(repo)

    const create = Spans.fn("Payments.create")(function* (request: CreatePaymentRequest) {
      yield* checkWebhookUrl("webhook_url", request.webhook_url)
      const deprecated = request.payment_options.filter((o) =>
        P.deprecatedPaymentOptions.includes(o.toLowerCase())
      )
      if (deprecated.length > 0) {
        return yield* new Discontinued({
          key: "payment.method.deprecated",
          message: `the ${deprecated.join(", ")} payment method is deprecated since 1 October 2026; use transfer`
        })
      }
      const unknown = request.payment_options.find((o) => o !== "transfer")
      if (unknown !== undefined) {
        return yield* InvalidInput.of(
          "payment_options",
          `unsupported payment option '${unknown}'; allowed: transfer`
        )
      }
      const user = yield* Effect.flatMap(users.findById(request.user_id), (u) =>
        Option.isSome(u) ? Effect.succeed(u.value) : Effect.fail(NotFound.of("user", request.user_id))
      )
      if (user.account_status !== "ACTIVE") {
        return yield* new NotPermitted({
          key: "account.not.active",
          message: `the account is ${user.account_status}`
        })
      }
      const print = fingerprint(request)
      const externalId = request.external_id ?? ExternalId.make(`ext-${yield* randomChars(20)}`)
      const quoteAmount = yield* rates.toArs(request.price)
      if (quoteAmount.minor <= 0n) {
        return yield* InvalidInput.of("price.amount", "the price is less than one centavo in ARS")
      }
      const quoted = Money.withinMaximum(quoteAmount)
      if (Either.isLeft(quoted)) {
        return yield* InvalidInput.of(
          "price.amount",
          `the price is ${Money.format(quoteAmount)} in ARS; ${quoted.left.message}`
        )
      }
      // In the merchant's name: the holder the payer's bank shows (and the payment page repeats).
      const account = yield* Effect.mapError(
        bank.openAccount({ holder: { cuit: user.cuit, name: user.name } }),
        bankFailure
      )
      const now = yield* DateTime.now
      const id = PaymentIdSchema.make(`VAR-${user.user_id}-${externalId}`)
      // Built from the decoded request and values made here, each of its type: the class does not
      // check them again (a check that could find nothing would cost CPU on every creation).
      const payment = new P.Payment(
        {
          id,
          payment_status: "PENDING",
          price: request.price,
          payment_options: ["transfer"],
          external_id: externalId,
          webhook_url: request.webhook_url ?? null,
          redirect_url: request.redirect_url ?? null,
          motive: request.motive ?? null,
          payment_url: `${config.paymentPageBaseUrl}/pay/${encodeURIComponent(id)}`,
          expiration_timestamp: DateTime.addDuration(
            now,
            paymentLifetime(user, config.defaultPaymentLifetime)
          ),
          creation_timestamp: now,
          last_modified_timestamp: now,
          is_deleted: false,
          user_id: user.user_id,
          quotes: [P.Quote.forAmount(quoteAmount, account.cvu, account.alias)],
          transactions: [],
          metadata: new P.PaymentMetadata({ motive: [] }),
          client_data: request.client_data ?? null,
          team_id: request.team_id ?? null,
          tags: request.tags ?? [],
          partner_id: request.partner_id ?? null,
          cvu_released: false,
          creation_request: print
        },
        true
      )
      // One write: the storage enters the CVU in the directory with the payment (CvuDirectory).
      // The external id's uniqueness is the insert's: no read before it (docs/decisions/0045-spans-and-unit-of-work-connection.md). Outside
      // the caller's unit of work, creations that arrive together share one where the storage
      // gains by it (`storeTogether.ts`); inside it, the payment is stored in it, alone. Under an
      // `Idempotency-Key` it is stored in a unit of work of its own that records the answer.
      const insert = (yield* Idempotency.answersAtCommit)
        ? transactor.withTransaction(Effect.zipRight(repo.insert(payment), Idempotency.committing(payment)))
        : !repo.storesTogether || (yield* transactor.inTransaction)
          ? repo.insert(payment)
          : together(payment)
      return yield* insert.pipe(
        Effect.zipRight(Metric.increment(Metrics.paymentsCreated)),
        Effect.as(payment),
        // The external id was used before (a repeated request, or a concurrent one that won the
        // race): give the CVU back and answer as the payment that has it did, or refuse.
        Effect.catchTag("Conflict", (conflict) =>
          bank.releaseAccount(account.cvu).pipe(
            Effect.ignore,
            Effect.zipRight(repo.findByExternalId(user.user_id, externalId)),
            Effect.flatMap(
              Option.match({
                onNone: () => Effect.fail(conflict),
                onSome: (winner) => existingFor(request, print, winner)
              })
            )
          )
        )
      )
    })

    const get = Spans.fn("Payments.get")(function* (owner: UserId, id: PaymentId) {
      return yield* findOwned(owner, id)
    })

    const getPublic = Spans.fn("Payments.getPublic")(function* (id: PaymentId) {
      const payment = yield* Effect.flatMap(repo.findById(id), (p) =>
        Option.isSome(p) ? Effect.succeed(p.value) : Effect.fail(NotFound.of("payment", id))
      )
      const merchant = yield* users.findById(payment.user_id)
      return new P.PublicPayment({
        id: payment.id,
        payment_status: payment.payment_status,
        price: payment.price,
        quotes: payment.quotes,
        expiration_timestamp: payment.expiration_timestamp,
        motive: payment.motive,
        redirect_url: payment.redirect_url,
        merchant_name: Option.match(merchant, { onNone: () => "", onSome: (u) => u.name }),
        refund: yield* refunds.of(payment)
      })
    })

    /** A user's payments, oldest first, read page by page: memory stays flat however many. */
    const list = (owner: UserId, query: PaymentQuery): Stream.Stream<P.Payment, NotFound> =>
      query.user_id !== owner
        ? Stream.fail(NotFound.of("user", query.user_id))
        : Stream.paginateChunkEffect(Option.none<PaymentCursor>(), (cursor) =>
            Effect.map(repo.page(query, cursor, PAGE_SIZE), (rows) => {
              const last = rows.at(-1)
              const next: Option.Option<Option.Option<PaymentCursor>> =
                rows.length < PAGE_SIZE || last === undefined
                  ? Option.none()
                  : Option.some(Option.some({ creation_timestamp: last.creation_timestamp, id: last.id }))
              return [Chunk.fromIterable(rows), next] as const
            })
          )

    /** Runs `f` on the locked payment and stores its result, as one unit of work. */
    const change = <E>(
      owner: UserId,
      id: PaymentId,
      f: (payment: P.Payment, now: DateTime.Utc) => Effect.Effect<{ payment: P.Payment; notify: boolean }, E>
    ) =>
      transactor.withTransaction(
        Effect.gen(function* () {
          const current = yield* findOwned(owner, id, true)
          const now = yield* DateTime.now
          const { payment, notify } = yield* f(current, now)
          const updated = new P.Payment({ ...payment, last_modified_timestamp: now })
          yield* repo.update(updated)
          if (notify) yield* emitPaymentUpdated(outbox, updated)
          return updated
        })
      )

    const extendExpiration = Spans.fn("Payments.extendExpiration")(function* (
      owner: UserId,
      id: PaymentId,
      request: ExtendExpirationRequest
    ) {
      return yield* change(owner, id, (payment, now) =>
        Effect.gen(function* () {
          yield* P.guard(isClosed(payment, now) ? asExpired(payment) : payment, "extend")
          if (!DateTime.greaterThan(request.expiration_timestamp, payment.expiration_timestamp)) {
            return yield* InvalidInput.of(
              "expiration_timestamp",
              "must be later than the current expiration_timestamp"
            )
          }
          return {
            payment: new P.Payment({ ...payment, expiration_timestamp: request.expiration_timestamp }),
            notify: false
          }
        })
      )
    })

    const reprice = Spans.fn("Payments.reprice")(function* (
      owner: UserId,
      id: PaymentId,
      request: RepriceRequest
    ) {
      const price = yield* Either.mapLeft(Money.fromInput(request.amount, "ARS"), (e) =>
        InvalidInput.of("amount", e.message)
      )
      if (price.minor <= 0n) return yield* InvalidInput.of("amount", "must be positive")
      return yield* change(owner, id, (payment, now) =>
        Effect.gen(function* () {
          yield* P.guard(
            isClosed(payment, now) && payment.payment_status === "PENDING" ? asExpired(payment) : payment,
            "reprice"
          )
          const user = yield* users.findById(owner)
          const tolerance = Option.match(user, {
            onNone: () => Money.zero("ARS"),
            onSome: (u) => u.transfer_tolerance
          })
          const quotes = payment.quotes.map((q) => P.Quote.forAmount(price, q.address, q.alias))
          const paid = payment.payment_status !== "PENDING"
          const status = paid ? P.statusFor(price, payment.totalReceived, tolerance) : payment.payment_status
          return {
            payment: new P.Payment({
              ...payment,
              price,
              quotes,
              payment_status: status,
              transaction_fields: P.transactionFields(price, payment.transactions)
            }),
            notify: paid
          }
        })
      )
    })

    const updateMotive = Spans.fn("Payments.updateMotive")(function* (
      actor: UserId,
      id: PaymentId,
      motive: string
    ) {
      return yield* transactor.withTransaction(
        Effect.gen(function* () {
          const payment = yield* Effect.flatMap(repo.findByIdForUpdate(id), (p) =>
            Option.isSome(p) ? Effect.succeed(p.value) : Effect.fail(NotFound.of("payment", id))
          )
          if (payment.user_id !== actor) {
            return yield* new NotPermitted({
              key: "payment.metadata.forbidden",
              message: "only the owner of the payment can change its motive"
            })
          }
          const now = yield* DateTime.now
          const entry = new P.MotiveChange({
            value: motive,
            previous: payment.motive,
            modified_by: actor,
            modification_timestamp: now
          })
          const updated = new P.Payment({
            ...payment,
            motive,
            metadata: new P.PaymentMetadata({ motive: [...payment.metadata.motive, entry] }),
            last_modified_timestamp: now
          })
          yield* repo.update(updated)
          return updated
        })
      )
    })

    return { create, get, getPublic, list, extendExpiration, reprice, updateMotive } as const
  })
}) {}

/** A PENDING payment past its expiry that the job has not reached yet is treated as EXPIRED. */
const asExpired = (payment: P.Payment) => new P.Payment({ ...payment, payment_status: "EXPIRED" })
