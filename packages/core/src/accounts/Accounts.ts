/**
 * Merchants' accounts: creation with an API credential, the account read a partner sees, the
 * configuration a partner (or the merchant) changes, and the account status an operator sets.
 */
import { DateTime, Effect, Option, Schema } from "effect"
import { CuitWithoutDashes, normalizeCuit } from "../bank/BankAccount.js"
import { UserCredential } from "../auth/Credential.js"
import { CredentialRepository } from "../auth/CredentialRepository.js"
import { Crypto } from "../auth/Crypto.js"
import { Conflict, NotPermitted, NotFound } from "../Errors.js"
import { PartnerId, UserId } from "../Ids.js"
import { decodeInput } from "../internal/decodeInput.js"
import { newId } from "../internal/ids.js"
import { newClientId, newSecret } from "../auth/secrets.js"
import { makeEvent, Outbox } from "../webhooks/Outbox.js"
import type { Partner } from "../auth/Partner.js"
import { PartnerRepository } from "../auth/PartnerRepository.js"
import type { Principal } from "../Principal.js"
import { Transactor } from "../Transactor.js"
import {
  AccountStatus,
  AliasPrefix,
  CancellationPeriodHours,
  CancellationPeriodMinutes,
  initialSettings,
  PayoutScheduleConfig,
  User
} from "./User.js"
import { UserRepository } from "./UserRepository.js"
import { ArsInput, ArsNumber, DisplayName, Omittable, Rate } from "../Wire.js"
import { Class } from "../internal/schemaClass.js"
import { EMAIL_PATTERN } from "../internal/text.js"
import * as Spans from "../Spans.js"

/** A CUIT as people write it ("30-71234567-1" or bare digits), validated after removing dashes. */
export const CuitInput = Schema.compose(
  Schema.transform(Schema.String, Schema.String, { strict: true, decode: normalizeCuit, encode: (s) => s }),
  CuitWithoutDashes
)

/** Trimmed, lower-cased, `local@domain.tld`, at most 254 characters. */
export const Email = Schema.compose(Schema.Trim, Schema.Lowercase).pipe(
  Schema.maxLength(254, { message: () => "must be at most 254 characters" }),
  Schema.pattern(EMAIL_PATTERN, { message: () => "must be an email address" })
)

export { DisplayName }

export class CreateUserRequest extends Class<CreateUserRequest>("CreateUserRequest")({
  /** Chosen by the operator; generated (`usr_…`) when absent. It becomes part of payment ids. */
  user_id: Schema.optional(
    UserId.pipe(
      Schema.pattern(/^[A-Za-z0-9_]{1,64}$/, {
        message: () => "must be 1-64 characters of letters, digits and '_'"
      })
    )
  ),
  name: DisplayName,
  email: Email,
  cuit: CuitInput,
  /** PENDING unless given (an operator may create an already verified account). */
  account_status: Schema.optional(AccountStatus),
  /** The partner that onboards the user. */
  partner_id: Schema.optional(PartnerId)
}) {}

/** What a user gets at creation: the secret is shown this once and stored only sealed. */
export interface CreatedUser {
  readonly user: User
  readonly client_id: string
  readonly client_secret: string
}

/**
 * PATCH /users/{user_id}: every field optional, only the fields sent change. The periods accept
 * null to clear them (otherwise a partner that once set minutes could never go back to hours).
 */
export class AccountPatch extends Class<AccountPatch>("AccountPatch")({
  alias_prefix: Schema.optional(AliasPrefix),
  cancellation_period: Schema.optional(Schema.NullOr(CancellationPeriodHours)),
  cancellation_period_minutes: Schema.optional(Schema.NullOr(CancellationPeriodMinutes)),
  automatic_cancellation: Schema.optional(Schema.Boolean),
  transfer_tolerance: Schema.optional(
    ArsInput.pipe(Schema.filter((m) => m.minor >= 0n || "must not be negative"))
  )
}) {}

export class PartnerConfig extends Class<PartnerConfig>("PartnerConfig")({
  commission: Rate,
  partner_id: PartnerId,
  partner_name: Schema.String,
  partner_slug: Schema.String
}) {}

/** SPEC's Account resource, field for field. */
export class Account extends Class<Account>("Account")({
  account_status: AccountStatus,
  alias_prefix: Omittable(AliasPrefix),
  cancellation_period: Omittable(Schema.Int),
  cancellation_period_minutes: Omittable(Schema.Int),
  transfer_tolerance: ArsNumber,
  payout_schedule: Omittable(PayoutScheduleConfig),
  user_id: UserId,
  /** The partner that onboarded the user; absent for users without one. */
  partner_config: Omittable(PartnerConfig)
}) {}

/**
 * Allowed status changes (SPEC leaves them open). Verification moves PENDING on; an operator
 * suspends and reinstates; a rejected user may be sent back to verification.
 */
export const statusTransitions: Record<AccountStatus, ReadonlyArray<AccountStatus>> = {
  PENDING: ["ACTIVE", "REJECTED", "SUSPENDED"],
  ACTIVE: ["SUSPENDED"],
  SUSPENDED: ["ACTIVE"],
  REJECTED: ["PENDING"]
}

/** SPEC's fixed `message` of the "Account activated" event. */
export const accountActivatedMessage = "account_activated"

/** Decodes a PATCH /users/{user_id} body; a broken limit is `InvalidInput` naming the field. */
export const decodeAccountPatch = decodeInput(AccountPatch)
/** Decodes a user creation (CLI); an invalid CUIT or email is `InvalidInput` naming the field. */
export const decodeCreateUserRequest = decodeInput(CreateUserRequest)

export class Accounts extends Effect.Service<Accounts>()("@cobro/core/Accounts", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepository
    const credentials = yield* CredentialRepository
    const partners = yield* PartnerRepository
    const crypto = yield* Crypto
    const outbox = yield* Outbox
    const transactor = yield* Transactor

    const findUser = (id: UserId, lock = false) =>
      Effect.flatMap(lock ? users.findByIdForUpdate(id) : users.findById(id), (u) =>
        Option.isSome(u) ? Effect.succeed(u.value) : Effect.fail(NotFound.of("user", id))
      )

    /** The caller may act on `userId`'s account only if it is the principal's own. */
    const ownAccount = (principal: Principal, userId: UserId) =>
      principal.user_id === userId ? Effect.void : Effect.fail(NotFound.of("user", userId))

    const createUser = Spans.fn("Accounts.createUser")(function* (request: CreateUserRequest) {
      const clientId = yield* newClientId(crypto)
      const secret = yield* newSecret(crypto, "cs_")
      const sealed = yield* crypto.encrypt(secret, clientId)
      const userId = request.user_id ?? UserId.make(yield* newId("usr"))
      return yield* transactor.withTransaction(
        Effect.gen(function* () {
          if (
            request.partner_id !== undefined &&
            Option.isNone(yield* partners.findById(request.partner_id))
          ) {
            return yield* NotFound.of("partner", request.partner_id)
          }
          const now = yield* DateTime.now
          const user = new User({
            user_id: userId,
            name: request.name,
            email: request.email,
            cuit: request.cuit,
            account_status: request.account_status ?? "PENDING",
            ...initialSettings(),
            partner_id: request.partner_id ?? null,
            creation_timestamp: now,
            last_modified_timestamp: now
          })
          yield* users.insert(user)
          yield* credentials.insertCredential(
            new UserCredential({
              user_id: userId,
              client_id: clientId,
              client_secret_sealed: sealed,
              password_hash: null,
              creation_timestamp: now,
              secret_rotated_at: now
            })
          )
          return { user, client_id: clientId, client_secret: secret } satisfies CreatedUser
        })
      )
    })

    const getUser = Spans.fn("Accounts.getUser")(function* (userId: UserId) {
      return yield* findUser(userId)
    })

    const partnerConfig = (user: User) =>
      user.partner_id === null
        ? Effect.succeed(null)
        : Effect.map(partners.findById(user.partner_id), (p) =>
            Option.getOrNull(Option.map(p, toPartnerConfig))
          )

    const toAccount = (user: User) =>
      Effect.map(
        partnerConfig(user),
        (partner_config) =>
          new Account({
            account_status: user.account_status,
            alias_prefix: user.alias_prefix,
            cancellation_period: user.cancellation_period,
            cancellation_period_minutes: user.cancellation_period_minutes,
            transfer_tolerance: user.transfer_tolerance,
            payout_schedule: user.payout_schedule,
            user_id: user.user_id,
            partner_config
          })
      )

    /** GET /users/{user_id}/account: a partner token for that very user (SPEC: a user token is 403). */
    const getAccount = Spans.fn("Accounts.getAccount")(function* (principal: Principal, userId: UserId) {
      if (principal._tag !== "Partner") {
        return yield* new NotPermitted({
          key: "account.partner_token.required",
          message: "reading the account requires a partner token"
        })
      }
      yield* ownAccount(principal, userId)
      return yield* toAccount(yield* findUser(userId))
    })

    /**
     * PATCH /users/{user_id}: the user itself or a partner acting for it; in any account state.
     * A taken alias prefix is a `Conflict` (`user.alias_prefix.taken`).
     */
    const updateAccount = Spans.fn("Accounts.updateAccount")(function* (
      principal: Principal,
      userId: UserId,
      patch: AccountPatch
    ) {
      yield* ownAccount(principal, userId)
      const user = yield* transactor.withTransaction(
        Effect.gen(function* () {
          const current = yield* findUser(userId, true)
          if (Object.values(patch).every((v) => v === undefined)) return current
          const updated = applyPatch(current, patch, yield* DateTime.now)
          yield* users.update(updated)
          return updated
        })
      )
      return yield* toAccount(user)
    })

    /**
     * An operator's status change (identity verification, suspension). Becoming ACTIVE writes the
     * "Account activated" event for the partner that onboarded the user, in the same unit of work.
     */
    const setStatus = Spans.fn("Accounts.setStatus")(function* (userId: UserId, status: AccountStatus) {
      return yield* transactor.withTransaction(
        Effect.gen(function* () {
          const current = yield* findUser(userId, true)
          if (current.account_status === status) return current
          if (!statusTransitions[current.account_status].includes(status)) {
            return yield* new Conflict({
              key: "account.status.transition.invalid",
              message: `an account cannot go from ${current.account_status} to ${status}`
            })
          }
          const updated = new User({
            ...current,
            account_status: status,
            last_modified_timestamp: yield* DateTime.now
          })
          yield* users.update(updated)
          if (status === "ACTIVE" && updated.partner_id !== null) {
            const partner = yield* partners.findById(updated.partner_id)
            yield* outbox.append(
              yield* makeEvent({
                type: "account.activated",
                user_id: updated.user_id,
                partner_id: updated.partner_id,
                webhook_url: Option.match(partner, { onNone: () => null, onSome: (p) => p.webhook_url }),
                payload: { message: accountActivatedMessage, user_id: updated.user_id }
              })
            )
          }
          return updated
        })
      )
    })

    return { createUser, getUser, getAccount, updateAccount, setStatus } as const
  })
}) {}

export const toPartnerConfig = (partner: Partner): PartnerConfig =>
  new PartnerConfig({
    commission: partner.commission,
    partner_id: partner.partner_id,
    partner_name: partner.name,
    partner_slug: partner.slug
  })

/** `user` with the fields sent in `patch` (present keys, including explicit nulls) replaced. */
export const applyPatch = (user: User, patch: AccountPatch, now: DateTime.Utc): User => {
  const pick = <K extends keyof AccountPatch & keyof User>(key: K): User[K] =>
    (patch[key] === undefined ? user[key] : patch[key]) as User[K]
  return new User({
    ...user,
    alias_prefix: pick("alias_prefix"),
    cancellation_period: pick("cancellation_period"),
    cancellation_period_minutes: pick("cancellation_period_minutes"),
    automatic_cancellation: pick("automatic_cancellation"),
    transfer_tolerance: pick("transfer_tolerance"),
    last_modified_timestamp: now
  })
}
