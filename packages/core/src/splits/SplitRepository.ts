/**
 * Storage of split payments, their payouts, payout accounts and verification requests. Row-level
 * operations only, so a SQL adapter maps each to one statement. Payouts change only while their
 * split's row is locked (`findByIdForUpdate`), and accounts and requests have their own locks.
 */
import {
  Chunk,
  Context,
  type DateTime,
  Effect,
  Either,
  HashMap,
  Layer,
  Option,
  Order,
  RedBlackTree
} from "effect"
import type { Cvu } from "../bank/BankAccount.js"
import { Conflict } from "../Errors.js"
import type {
  ExternalId,
  PartnerId,
  PayoutAccountId,
  SplitPaymentId,
  SplitPayoutId,
  UserId,
  VerificationRequestId
} from "../Ids.js"
import { MemoryCvuTable } from "../bank/memoryCvuTable.js"
import { makeRef, MemoryDb, timeKey } from "../internal/memoryDb.js"
import { CvuEntry } from "../bank/CvuDirectory.js"
import type { Cursor } from "../Page.js"
import {
  dueAt,
  type PayoutAccount,
  type SplitPayment,
  type SplitPayout,
  type VerificationRequest
} from "./Split.js"
import { type DueScope, everyone, includes } from "../clocks/DueScope.js"

export class SplitRepository extends Context.Tag("@cobro/core/SplitRepository")<
  SplitRepository,
  {
    /** Fails with `Conflict` when the id, `(user_id, partner_id, external_id)` or the CVU is taken. */
    readonly insert: (split: SplitPayment) => Effect.Effect<void, Conflict>
    readonly update: (split: SplitPayment) => Effect.Effect<void>
    readonly findById: (id: SplitPaymentId) => Effect.Effect<Option.Option<SplitPayment>>
    /** Like `findById`, and inside a transaction the row stays locked until it ends. */
    readonly findByIdForUpdate: (id: SplitPaymentId) => Effect.Effect<Option.Option<SplitPayment>>
    readonly findByExternalId: (
      user: UserId,
      partner: PartnerId | null,
      externalId: ExternalId
    ) => Effect.Effect<Option.Option<SplitPayment>>
    readonly findByCvu: (cvu: Cvu) => Effect.Effect<Option.Option<SplitPayment>>
    /**
     * Splits whose payouts are due, oldest first: ON_HOLD with `hold_until <= now`, or PROCESSING
     * with `lease_until <= now` (a run that claimed them did not finish); only those of `scope`
     * (everyone by default).
     */
    readonly findDue: (
      now: DateTime.Utc,
      limit: number,
      scope?: DueScope
    ) => Effect.Effect<ReadonlyArray<SplitPayment>>

    readonly insertPayouts: (payouts: ReadonlyArray<SplitPayout>) => Effect.Effect<void>
    readonly updatePayout: (payout: SplitPayout) => Effect.Effect<void>
    /**
     * Up to `limit` of the payouts of a user's splits, newest first (creation time, then payout
     * id, both descending), after `before` (the last item of the previous page).
     */
    readonly listPayoutsByUser: (
      user: UserId,
      before: Option.Option<Cursor>,
      limit: number
    ) => Effect.Effect<ReadonlyArray<SplitPayout>>
    /** A split's payouts in instruction order. */
    readonly payoutsOf: (id: SplitPaymentId) => Effect.Effect<ReadonlyArray<SplitPayout>>

    readonly insertAccounts: (accounts: ReadonlyArray<PayoutAccount>) => Effect.Effect<void>
    readonly updateAccount: (account: PayoutAccount) => Effect.Effect<void>
    readonly findAccount: (id: PayoutAccountId) => Effect.Effect<Option.Option<PayoutAccount>>
    readonly findAccountForUpdate: (id: PayoutAccountId) => Effect.Effect<Option.Option<PayoutAccount>>
    /** A user's payout accounts, oldest first. */
    readonly accountsOf: (user: UserId) => Effect.Effect<ReadonlyArray<PayoutAccount>>

    readonly insertRequest: (request: VerificationRequest) => Effect.Effect<void>
    readonly updateRequest: (request: VerificationRequest) => Effect.Effect<void>
    readonly findRequest: (id: VerificationRequestId) => Effect.Effect<Option.Option<VerificationRequest>>
    readonly findRequestForUpdate: (
      id: VerificationRequestId
    ) => Effect.Effect<Option.Option<VerificationRequest>>
  }
>() {}

/**
 * The `Conflict` the adapters raise (memory and SQL alike) when an insert's id or external id
 * (`external_id`), its CVU or its alias is taken.
 */
const takenKey = {
  external_id: "split.external_id.taken",
  cvu: "split.cvu.taken",
  alias: "split.alias.taken"
} as const
export const taken = (what: keyof typeof takenKey) =>
  new Conflict({ key: takenKey[what], message: "a split payment with this id or CVU already exists" })

/** The due-index key of a split, when it can become due. */
const dueKey = (s: SplitPayment): Option.Option<string> => {
  const at = dueAt(s)
  return at === null ? Option.none() : Option.some(`${timeKey(at)}\u0000${s.split_payment_id}`)
}

const externalKey = (user: string, partner: string | null, ext: string) =>
  `${user}\u0000${partner ?? ""}\u0000${ext}`

interface SplitTables {
  readonly byId: HashMap.HashMap<SplitPaymentId, SplitPayment>
  readonly byExternal: HashMap.HashMap<string, SplitPaymentId>
  readonly byCvu: HashMap.HashMap<string, SplitPaymentId>
  readonly due: RedBlackTree.RedBlackTree<string, SplitPaymentId>
}

interface AccountTables {
  readonly byId: HashMap.HashMap<PayoutAccountId, PayoutAccount>
  readonly byUser: RedBlackTree.RedBlackTree<string, PayoutAccountId>
}

export const makeMemory = Effect.gen(function* () {
  const db = yield* MemoryDb
  const cvus = yield* MemoryCvuTable
  const splits = yield* makeRef<SplitTables>({
    byId: HashMap.empty(),
    byExternal: HashMap.empty(),
    byCvu: HashMap.empty(),
    due: RedBlackTree.empty(Order.string)
  })
  const payouts = yield* makeRef(HashMap.empty<SplitPaymentId, Chunk.Chunk<SplitPayout>>())
  /** Payouts by their split's user, then creation time: `[split, payout]`. */
  const payoutsByUser = yield* makeRef(
    RedBlackTree.empty<string, readonly [SplitPaymentId, SplitPayoutId]>(Order.string)
  )
  const payoutUserKey = (user: string, at: DateTime.Utc, id: string) =>
    `${user}\u0000${timeKey(at)}\u0000${id}`
  const accounts = yield* makeRef<AccountTables>({
    byId: HashMap.empty(),
    byUser: RedBlackTree.empty(Order.string)
  })
  const requests = yield* makeRef(HashMap.empty<VerificationRequestId, VerificationRequest>())

  const findById = (id: SplitPaymentId) => Effect.map(splits.get, (t) => HashMap.get(t.byId, id))
  const findAccount = (id: PayoutAccountId) => Effect.map(accounts.get, (t) => HashMap.get(t.byId, id))
  const findRequest = (id: VerificationRequestId) => Effect.map(requests.get, HashMap.get(id))
  const withDue = (due: SplitTables["due"], split: SplitPayment) =>
    Option.match(dueKey(split), {
      onNone: () => due,
      onSome: (key) => RedBlackTree.insert(due, key, split.split_payment_id)
    })
  const userKey = (a: PayoutAccount) =>
    `${a.user_id}\u0000${timeKey(a.creation_timestamp)}\u0000${a.account_id}`

  const insertRow = (split: SplitPayment) =>
    splits.updateOrFail((t) => {
      const ext = externalKey(split.user_id, split.partner_id, split.external_id)
      if (HashMap.has(t.byId, split.split_payment_id) || HashMap.has(t.byExternal, ext)) {
        return Either.left(taken("external_id"))
      }
      if (HashMap.has(t.byCvu, split.cvu)) return Either.left(taken("cvu"))
      return Either.right({
        byId: HashMap.set(t.byId, split.split_payment_id, split),
        byExternal: HashMap.set(t.byExternal, ext, split.split_payment_id),
        byCvu: HashMap.set(t.byCvu, split.cvu, split.split_payment_id),
        due: withDue(t.due, split)
      })
    })

  return SplitRepository.of({
    insert: (split) =>
      db.transaction(
        Effect.zipRight(
          insertRow(split),
          cvus.register(
            new CvuEntry({
              cvu: split.cvu,
              owner: "split_payment",
              owner_id: split.split_payment_id,
              user_id: split.user_id
            })
          )
        )
      ),
    update: (split) =>
      splits.update((t) => {
        const previous = HashMap.get(t.byId, split.split_payment_id)
        if (Option.isNone(previous)) return t
        const due = Option.match(dueKey(previous.value), {
          onNone: () => t.due,
          onSome: (key) => RedBlackTree.removeFirst(t.due, key)
        })
        return { ...t, byId: HashMap.set(t.byId, split.split_payment_id, split), due: withDue(due, split) }
      }),
    findById,
    findByIdForUpdate: findById,
    findByExternalId: (user, partner, ext) =>
      Effect.map(splits.get, (t) =>
        Option.flatMap(HashMap.get(t.byExternal, externalKey(user, partner, ext)), (id) =>
          HashMap.get(t.byId, id)
        )
      ),
    findByCvu: (cvu) =>
      Effect.map(splits.get, (t) =>
        Option.flatMap(HashMap.get(t.byCvu, cvu), (id) => HashMap.get(t.byId, id))
      ),
    findDue: (now, limit, scope = everyone) =>
      Effect.map(splits.get, (t) => {
        const bound = `${timeKey(now)}\u0001`
        const out: Array<SplitPayment> = []
        for (const [key, id] of t.due) {
          if (out.length >= limit || key > bound) break
          const split = Option.getOrThrow(HashMap.get(t.byId, id))
          if (includes(scope, split.user_id)) out.push(split)
        }
        return out
      }),

    insertPayouts: (rows) =>
      Effect.zipRight(
        payouts.update((t) => {
          let next = t
          for (const row of rows) {
            const list = Option.getOrElse(HashMap.get(next, row.split_payment_id), () =>
              Chunk.empty<SplitPayout>()
            )
            next = HashMap.set(next, row.split_payment_id, Chunk.append(list, row))
          }
          return next
        }),
        Effect.flatMap(splits.get, (t) =>
          payoutsByUser.update((index) => {
            let next = index
            for (const row of rows) {
              const split = HashMap.get(t.byId, row.split_payment_id)
              if (Option.isNone(split)) continue
              next = RedBlackTree.insert(
                next,
                payoutUserKey(split.value.user_id, row.creation_timestamp, row.payout_id),
                [row.split_payment_id, row.payout_id] as const
              )
            }
            return next
          })
        )
      ),
    listPayoutsByUser: (user, before, limit) =>
      Effect.zipWith(payoutsByUser.get, payouts.get, (index, t) => {
        const prefix = `${user}\u0000`
        // `\uffff` sorts after every key of this user: the newest first when no cursor.
        const from = Option.match(before, {
          onNone: () => `${prefix}\uffff`,
          onSome: (c) => payoutUserKey(user, c.creation_timestamp, c.id)
        })
        const out: Array<SplitPayout> = []
        for (const [key, [split, id]] of RedBlackTree.lessThanReversed(index, from)) {
          if (!key.startsWith(prefix) || out.length >= limit) break
          const payout = Option.flatMap(
            HashMap.get(t, split),
            Chunk.findFirst((p) => p.payout_id === id)
          )
          if (Option.isSome(payout)) out.push(payout.value)
        }
        return out
      }),
    updatePayout: (row) =>
      payouts.update((t) =>
        HashMap.modify(t, row.split_payment_id, (list) =>
          Chunk.map(list, (p) => (p.payout_id === row.payout_id ? row : p))
        )
      ),
    payoutsOf: (id) =>
      Effect.map(payouts.get, (t) =>
        Option.match(HashMap.get(t, id), {
          onNone: () => [],
          onSome: (list) => [...Chunk.toReadonlyArray(list)].sort((a, b) => a.position - b.position)
        })
      ),

    insertAccounts: (rows) =>
      accounts.update((t) => {
        let { byId, byUser } = t
        for (const row of rows) {
          byId = HashMap.set(byId, row.account_id, row)
          byUser = RedBlackTree.insert(byUser, userKey(row), row.account_id)
        }
        return { byId, byUser }
      }),
    updateAccount: (row) =>
      accounts.update((t) =>
        HashMap.has(t.byId, row.account_id) ? { ...t, byId: HashMap.set(t.byId, row.account_id, row) } : t
      ),
    findAccount,
    findAccountForUpdate: findAccount,
    accountsOf: (user) =>
      Effect.map(accounts.get, (t) => {
        const out: Array<PayoutAccount> = []
        for (const [key, id] of RedBlackTree.greaterThan(t.byUser, `${user}\u0000`)) {
          if (!key.startsWith(`${user}\u0000`)) break
          out.push(Option.getOrThrow(HashMap.get(t.byId, id)))
        }
        return out
      }),

    insertRequest: (request) => requests.update(HashMap.set(request.request_id, request)),
    updateRequest: (request) =>
      requests.update((t) =>
        HashMap.has(t, request.request_id) ? HashMap.set(t, request.request_id, request) : t
      ),
    findRequest,
    findRequestForUpdate: findRequest
  })
})

export const layerMemory: Layer.Layer<SplitRepository, never, MemoryDb | MemoryCvuTable> = Layer.effect(
  SplitRepository,
  makeMemory
)
