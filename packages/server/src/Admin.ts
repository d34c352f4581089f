/**
 * What an operator does to a cobro database, over the engine's services: create merchants and
 * partners, set an account's status, verify the ledger, inspect and replay webhook deliveries,
 * read the sandbox's 2FA codes. The CLI prints these; the server uses `ensureDemo` at start.
 */
import {
  Accounts,
  Auth,
  BankAccount,
  Credential,
  CredentialRepository,
  Crypto,
  Errors,
  Ids,
  Onboarding,
  type Partner,
  PartnerRepository,
  type Payment,
  PaymentRepository,
  Principal,
  RealTime,
  SandboxBank,
  SecondFactor,
  Transactor,
  User,
  UserRepository,
  WebhookDeliveryRepository
} from "@cobro/core"
import { Webhooks } from "@cobro/webhooks"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option, ParseResult, Schema } from "effect"

/**
 * An id the operator typed, decoded with its schema: a malformed one (a control character, too
 * long) is an `InvalidInput` naming `field`, printed as such, not a defect with a stack trace.
 */
const idFrom =
  <A>(schema: Schema.Schema<A, string>, field: string) =>
  (value: string): Effect.Effect<A, Errors.InvalidInput> =>
    Schema.decodeUnknown(schema)(value).pipe(
      Effect.mapError((error) =>
        Errors.InvalidInput.of(
          field,
          ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "is invalid"
        )
      )
    )
const userIdFrom = idFrom(Ids.UserId, "user_id")
const eventIdFrom = idFrom(Ids.EventId, "event_id")
const paymentIdFrom = idFrom(Ids.PaymentId, "payment_id")
const partnerIdFrom = idFrom(Ids.PartnerId, "partner_id")

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
    const decoded = yield* Schema.decodeUnknown(Onboarding.Password)(password).pipe(
      Effect.mapError((error) =>
        Errors.InvalidInput.of(
          "password",
          ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "is invalid"
        )
      )
    )
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
export const createUser = Effect.fn("Admin.createUser")(function* (input: CreateUserInput) {
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
 * cuenta"; the API credentials are untouched.
 */
export const setPassword = Effect.fn("Admin.setPassword")(function* (userId: string, password: string) {
  const id = yield* userIdFrom(userId)
  const hash = yield* passwordHashOf(password)
  yield* Transactor.transactionally(storePasswordHash(id, hash))
  return { user_id: id, password_set: true } as const
})

export interface CreatePartnerInput {
  readonly name: string
  readonly redirect_url: string
  readonly webhook_url?: string | undefined
  readonly slug?: string | undefined
  readonly commission?: number | undefined
}

/** Registers a partner; its secret is returned once and stored sealed. */
export const createPartner = Effect.fn("Admin.createPartner")(function* (input: CreatePartnerInput) {
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
export const setStatus = Effect.fn("Admin.setStatus")(function* (userId: string, status: string) {
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

export interface ListWebhooksInput {
  readonly status?: string | undefined
  readonly user_id?: string | undefined
  readonly after?: string | undefined
  readonly limit?: number | undefined
}

export const listWebhooks = Effect.fn("Admin.listWebhooks")(function* (input: ListWebhooksInput) {
  const webhooks = yield* Webhooks.Webhooks
  const status =
    input.status === undefined
      ? undefined
      : yield* Schema.decodeUnknown(WebhookDeliveryRepository.DeliveryStatus)(
          input.status.toLowerCase()
        ).pipe(
          Effect.mapError(() =>
            Errors.InvalidInput.of(
              "status",
              `must be one of ${WebhookDeliveryRepository.DeliveryStatus.literals.join(", ")}, got "${input.status}"`
            )
          )
        )
  return yield* webhooks.list({
    ...(status === undefined ? {} : { status }),
    ...(input.user_id === undefined ? {} : { user_id: yield* userIdFrom(input.user_id) }),
    ...(input.after === undefined ? {} : { after: yield* eventIdFrom(input.after) }),
    ...(input.limit === undefined ? {} : { limit: input.limit })
  })
})

export const replayWebhook = Effect.fn("Admin.replayWebhook")(function* (eventId: string) {
  const webhooks = yield* Webhooks.Webhooks
  return yield* webhooks.replay(yield* eventIdFrom(eventId))
})

export interface ListInput {
  /** The last id of the previous page (ids are listed in order). */
  readonly after?: string | undefined
  readonly limit?: number | undefined
}

const pageLimit = (limit: number | undefined) =>
  limit === undefined
    ? Effect.succeed(100)
    : Number.isInteger(limit) && limit >= 1 && limit <= 500
      ? Effect.succeed(limit)
      : Effect.fail(Errors.InvalidInput.of("limit", `must be an integer from 1 to 500, got ${limit}`))

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

/** Merchants in user id order, a page at a time. */
export const listUsers = Effect.fn("Admin.listUsers")(function* (input: ListInput) {
  const sql = yield* SqlClient.SqlClient
  const users = yield* UserRepository.UserRepository
  const limit = yield* pageLimit(input.limit)
  const after = input.after === undefined ? undefined : yield* userIdFrom(input.after)
  const ids = yield* sql<{ readonly user_id: string }>`SELECT user_id FROM cobro_users
      ${after === undefined ? sql`` : sql`WHERE user_id > ${after}`}
      ORDER BY user_id LIMIT ${limit}`.pipe(Effect.orDie)
  const found = yield* Effect.forEach(ids, (row) => users.findById(Ids.UserId.make(row.user_id)))
  return yield* Effect.forEach(
    found.flatMap((u) => (Option.isSome(u) ? [u.value] : [])),
    viewOf
  )
})

export const showUser = Effect.fn("Admin.showUser")(function* (userId: string) {
  const users = yield* UserRepository.UserRepository
  const id = yield* userIdFrom(userId)
  const user = yield* users.findById(id)
  if (Option.isNone(user)) return yield* Errors.NotFound.of("user", id)
  return yield* viewOf(user.value)
})

/** Partners in partner id order, a page at a time. */
export const listPartners = Effect.fn("Admin.listPartners")(function* (input: ListInput) {
  const sql = yield* SqlClient.SqlClient
  const partners = yield* PartnerRepository.PartnerRepository
  const limit = yield* pageLimit(input.limit)
  const after = input.after === undefined ? undefined : yield* partnerIdFrom(input.after)
  const ids = yield* sql<{ readonly partner_id: string }>`SELECT partner_id FROM cobro_partners
      ${after === undefined ? sql`` : sql`WHERE partner_id > ${after}`}
      ORDER BY partner_id LIMIT ${limit}`.pipe(Effect.orDie)
  const found = yield* Effect.forEach(ids, (row) => partners.findById(Ids.PartnerId.make(row.partner_id)))
  return found.flatMap((p): ReadonlyArray<Partner.Partner> => (Option.isSome(p) ? [p.value] : []))
})

/** Any merchant's payment, by id (the operator sees every merchant's). */
export const showPayment = Effect.fn("Admin.showPayment")(function* (paymentId: string) {
  const payments = yield* PaymentRepository.PaymentRepository
  const id = yield* paymentIdFrom(paymentId)
  const payment = yield* payments.findById(id)
  if (Option.isNone(payment)) return yield* Errors.NotFound.of("payment", id)
  const found: Payment.Payment = payment.value
  return found
})

export interface SandboxCode {
  readonly request_id: string
  readonly user_id: string
  readonly code: string
  readonly expires_at: string
}

/**
 * The 2FA codes of the payout-account verifications still open (pending and not expired),
 * oldest first. The sandbox's `SecondFactor` derives each code from its request id, so any
 * process can show them; only a sandbox ever does. Codes expire on real time (`RealTime`).
 */
export const sandboxCodes = Effect.fn("Admin.sandboxCodes")(function* (userId?: string) {
  const sql = yield* SqlClient.SqlClient
  const now = DateTime.toEpochMillis(yield* RealTime.now)
  const rows = yield* sql<{
    readonly request_id: string
    readonly user_id: string
    readonly exp_ms: unknown
  }>`SELECT request_id, user_id, exp_ms FROM cobro_verification_requests
      WHERE status = 'PENDING' AND exp_ms > ${now}
      ${userId === undefined ? sql`` : sql`AND user_id = ${userId}`}
      ORDER BY created_ms, request_id`.pipe(Effect.orDie)
  return rows.map((r): SandboxCode => ({
    request_id: r.request_id,
    user_id: r.user_id,
    code: SecondFactor.sandboxCode(r.request_id),
    expires_at: DateTime.formatIso(DateTime.unsafeMake(Number(r.exp_ms)))
  }))
})

// ---------------------------------------------------------------------------------------------
// The sandbox's demo merchant

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
export const ensureDemo = Effect.fn("Admin.ensureDemo")(function* () {
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
