/**
 * Merchants and partners: create them, set a merchant's password and status, list and show them;
 * the sandbox's demo merchant.
 */
import {
  Accounts,
  Auth,
  BankAccount,
  Credential,
  Crypto,
  Errors,
  Ids,
  Onboarding,
  type Partner,
  Principal,
  Spans,
  User,
  WebSessions
} from "@cobro/core"
import {
  CredentialRepository,
  PartnerRepository,
  Transactor,
  UserRepository,
  WebSessionRepository
} from "@cobro/core/ports"
import { SandboxBank } from "@cobro/bank-sandbox"
import { SqlClient } from "@effect/sql"
import { Array as Arr, Effect, Option, Schema } from "effect"
import { idFrom, type ListInput, pageLimit, partnerIdFrom, userIdFrom } from "./input.js"

export interface CreateUserInput {
  readonly name: string
  readonly email: string
  readonly cuit: string
  readonly user_id?: string | undefined
  readonly alias_prefix?: string | undefined
  readonly status?: string | undefined
  /** The partner that onboards the user (its webhook gets the account's events). */
  readonly partner_id?: string | undefined
  /** The password of the onboarding page's "Ya tengo una cuenta" (stored as a hash). */
  readonly password?: string | undefined
}

/** A password for the onboarding page, checked as the page's registration checks it. */
const passwordHashOf = (password: string) =>
  Effect.gen(function* () {
    const crypto = yield* Crypto.Crypto
    const decoded = yield* idFrom(Onboarding.Password, "password")(password)
    return yield* crypto.hashPassword(decoded)
  })

export interface CreatedCredentials {
  readonly user_id: string
  readonly client_id: string
  readonly client_secret: string
}

const aliasPrefixPatch = Schema.decodeUnknown(Accounts.AccountPatch)

/**
 * Creates a merchant with an API credential and, when given, its alias prefix, in one unit of
 * work: a taken prefix leaves nothing behind. The secret is returned once and stored sealed.
 */
export const createUser = Spans.fn("Admin.createUser")(function* (input: CreateUserInput) {
  const accounts = yield* Accounts.Accounts
  const request = yield* Accounts.decodeCreateUserRequest({
    name: input.name,
    email: input.email,
    cuit: input.cuit,
    ...(input.user_id === undefined ? {} : { user_id: input.user_id }),
    ...(input.status === undefined ? {} : { account_status: input.status.toUpperCase() }),
    ...(input.partner_id === undefined ? {} : { partner_id: input.partner_id })
  })
  const patch =
    input.alias_prefix === undefined
      ? Option.none()
      : Option.some(
          yield* aliasPrefixPatch({ alias_prefix: input.alias_prefix }).pipe(
            Effect.mapError(() =>
              Errors.InvalidInput.of(
                "alias_prefix",
                "must be 1-8 characters of lowercase letters, digits and underscore"
              )
            )
          )
        )
  const passwordHash =
    input.password === undefined ? Option.none() : Option.some(yield* passwordHashOf(input.password))
  return yield* Transactor.transactionally(
    Effect.gen(function* () {
      const created = yield* accounts.createUser(request)
      if (Option.isSome(passwordHash)) yield* storePasswordHash(created.user.user_id, passwordHash.value)
      if (Option.isSome(patch)) {
        yield* accounts.updateAccount(
          Principal.Principal.User({ user_id: created.user.user_id }),
          created.user.user_id,
          patch.value
        )
      }
      return {
        user_id: created.user.user_id,
        client_id: created.client_id,
        client_secret: created.client_secret
      } satisfies CreatedCredentials
    })
  )
})

/** Replaces the user's onboarding-page password hash (in the caller's transaction). */
const storePasswordHash = (userId: Ids.UserId, hash: string) =>
  Effect.gen(function* () {
    const credentials = yield* CredentialRepository.CredentialRepository
    const credential = yield* credentials.findCredentialForUpdate(userId)
    if (Option.isNone(credential)) return yield* Errors.NotFound.of("user", userId)
    yield* credentials.updateCredential(
      new Credential.UserCredential({ ...credential.value, password_hash: hash })
    )
  })

/**
 * Sets (or replaces) the password a merchant signs in with on the onboarding page's "Ya tengo una
 * cuenta" and on the dashboard; the API credentials are untouched, the merchant's dashboard
 * sessions end.
 */
export const setPassword = Spans.fn("Admin.setPassword")(function* (userId: string, password: string) {
  const id = yield* userIdFrom(userId)
  const hash = yield* passwordHashOf(password)
  yield* Transactor.transactionally(
    Effect.zipRight(
      storePasswordHash(id, hash),
      Effect.flatMap(WebSessionRepository.WebSessionRepository, (sessions) =>
        sessions.deleteSessionsOf("user", id)
      )
    )
  )
  return { user_id: id, password_set: true } as const
})

/**
 * Sets (or replaces) the password a partner signs in with on the dashboard
 * (`/dashboard/sign-in/partner`, with its client id); its API credentials are untouched, its
 * dashboard sessions end.
 */
export const setPartnerPassword = Spans.fn("Admin.setPartnerPassword")(function* (
  partnerId: string,
  password: string
) {
  const id = yield* partnerIdFrom(partnerId)
  const checked = yield* idFrom(Onboarding.Password, "password")(password)
  yield* (yield* WebSessions.WebSessions).setPartnerPassword(id, checked)
  return { partner_id: id, password_set: true } as const
})

export interface CreatePartnerInput {
  readonly name: string
  readonly redirect_url: string
  readonly webhook_url?: string | undefined
  readonly slug?: string | undefined
  readonly commission?: number | undefined
}

/** Registers a partner; its secret is returned once and stored sealed. */
export const createPartner = Spans.fn("Admin.createPartner")(function* (input: CreatePartnerInput) {
  const auth = yield* Auth.Auth
  const request = yield* Auth.decodeRegisterPartnerRequest({
    name: input.name,
    redirect_url: input.redirect_url,
    ...(input.webhook_url === undefined ? {} : { webhook_url: input.webhook_url }),
    ...(input.slug === undefined ? {} : { slug: input.slug }),
    ...(input.commission === undefined ? {} : { commission: input.commission })
  })
  const registered = yield* auth.registerPartner(request)
  return {
    partner_id: registered.partner.partner_id,
    slug: registered.partner.slug,
    client_id: registered.client_id,
    client_secret: registered.client_secret
  } as const
})

/** An operator's status change (verification, suspension); the account as it is afterwards. */
export const setStatus = Spans.fn("Admin.setStatus")(function* (userId: string, status: string) {
  const accounts = yield* Accounts.Accounts
  const decoded = yield* Schema.decodeUnknown(User.AccountStatus)(status.toUpperCase()).pipe(
    Effect.mapError(() =>
      Errors.InvalidInput.of(
        "status",
        `must be one of ${User.AccountStatus.literals.join(", ")}, got "${status}"`
      )
    )
  )
  const user = yield* accounts.setStatus(yield* userIdFrom(userId), decoded)
  return { user_id: user.user_id, account_status: user.account_status } as const
})

/** A merchant as an operator sees it: the account, its API client id and whether it has a password. */
export interface UserView {
  readonly user: User.User
  readonly client_id: string | null
  readonly password_set: boolean
}

const viewOf = (user: User.User) =>
  Effect.map(
    Effect.flatMap(CredentialRepository.CredentialRepository, (c) => c.findCredential(user.user_id)),
    (credential): UserView => ({
      user,
      client_id: Option.match(credential, { onNone: () => null, onSome: (c) => c.client_id }),
      password_set: Option.exists(credential, (c) => c.password_hash !== null)
    })
  )

/** The ids of `table` after `input.after`, in order, a page at a time. */
const idsPage = (table: string, id: string, after: string | undefined, limit: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Record<string, string>>`SELECT ${sql(id)} FROM ${sql(table)}
      ${after === undefined ? sql`` : sql`WHERE ${sql(id)} > ${after}`}
      ORDER BY ${sql(id)} LIMIT ${limit}`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.map((row) => row[id]!))
    )
  )

/** Merchants in user id order, a page at a time. */
export const listUsers = Spans.fn("Admin.listUsers")(function* (input: ListInput) {
  const users = yield* UserRepository.UserRepository
  const after = input.after === undefined ? undefined : yield* userIdFrom(input.after)
  const ids = yield* idsPage("cobro_users", "user_id", after, yield* pageLimit(input.limit))
  const found = yield* Effect.forEach(ids, (id) => users.findById(Ids.UserId.make(id)))
  return yield* Effect.forEach(Arr.getSomes(found), viewOf)
})

export const showUser = Spans.fn("Admin.showUser")(function* (userId: string) {
  const users = yield* UserRepository.UserRepository
  const id = yield* userIdFrom(userId)
  const user = yield* users.findById(id)
  if (Option.isNone(user)) return yield* Errors.NotFound.of("user", id)
  return yield* viewOf(user.value)
})

/** Partners in partner id order, a page at a time. */
export const listPartners = Spans.fn("Admin.listPartners")(function* (input: ListInput) {
  const partners = yield* PartnerRepository.PartnerRepository
  const after = input.after === undefined ? undefined : yield* partnerIdFrom(input.after)
  const ids = yield* idsPage("cobro_partners", "partner_id", after, yield* pageLimit(input.limit))
  const found = yield* Effect.forEach(ids, (id) => partners.findById(Ids.PartnerId.make(id)))
  const listed: ReadonlyArray<Partner.Partner> = Arr.getSomes(found)
  return listed
})

// ---------------------------------------------------------------------------------------------
// The sandbox's demo merchant, which the server makes sure of at start

export const demo = {
  user_id: "demo",
  name: "Demo Store",
  email: "demo@example.com",
  cuit: BankAccount.makeCuit("30", "71234567"),
  alias_prefix: "demo",
  /** An account at the sandbox bank held by the demo merchant: a destination for payouts. */
  payoutAccount: {
    account: BankAccount.makeCbu("2850590", "0000000000017"),
    alias: "demo.payouts"
  }
} as const

export type DemoMerchant =
  | ({ readonly _tag: "Created" } & CreatedCredentials)
  | { readonly _tag: "Existing"; readonly user_id: string; readonly client_id: string | null }
  | { readonly _tag: "Failed"; readonly reason: string }

/**
 * Makes sure the sandbox has its demo merchant (ACTIVE, alias prefix `demo`): creates it with
 * fresh credentials the first time, otherwise reports the existing one (its secret was shown when
 * it was created and is stored only sealed). Also tells the sandbox bank about the demo's payout
 * account, which the bank (in memory) forgets at every restart.
 */
export const ensureDemo = Spans.fn("Admin.ensureDemo")(function* () {
  const users = yield* UserRepository.UserRepository
  const credentials = yield* CredentialRepository.CredentialRepository
  const bank = yield* SandboxBank.SandboxBank
  yield* bank.registerHolder({ ...demo.payoutAccount, cuit: demo.cuit, name: demo.name })
  const existing = (): Effect.Effect<DemoMerchant> =>
    Effect.map(credentials.findCredential(Ids.UserId.make(demo.user_id)), (c) => ({
      _tag: "Existing" as const,
      user_id: demo.user_id,
      client_id: Option.match(c, { onNone: () => null, onSome: (c) => c.client_id })
    }))
  if (Option.isSome(yield* users.findById(Ids.UserId.make(demo.user_id)))) return yield* existing()
  return yield* createUser({
    user_id: demo.user_id,
    name: demo.name,
    email: demo.email,
    cuit: demo.cuit,
    alias_prefix: demo.alias_prefix,
    status: "ACTIVE"
  }).pipe(
    Effect.map((created): DemoMerchant => ({ _tag: "Created", ...created })),
    // Another instance created it first, or the email or prefix is taken by another user.
    Effect.catchAll((error) =>
      Effect.flatMap(users.findById(Ids.UserId.make(demo.user_id)), (found) =>
        Option.isSome(found)
          ? existing()
          : Effect.succeed<DemoMerchant>({ _tag: "Failed", reason: `${error.key}: ${error.message}` })
      )
    )
  )
})

/**
 * A new client secret for merchant `userId`, shown this once. The old secret stops working at
 * once and every token the merchant holds is revoked (core's `Auth.rotateSecret`): a lost or
 * leaked secret is dead when this returns, with no grace period.
 */
export const rotateSecret = Spans.fn("Admin.rotateSecret")(function* (userId: string) {
  const auth = yield* Auth.Auth
  const rotated = yield* auth.rotateSecret(yield* userIdFrom(userId))
  return { user_id: userId, client_id: rotated.client_id, client_secret: rotated.client_secret }
})
