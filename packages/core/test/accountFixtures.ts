import { Effect, Schema } from "effect"
import { Accounts, Auth, BankAccount, type Ids } from "../src/index.js"

/** A CUIT for DNI `dni` (8 digits). */
export const cuitFor = (dni: string) => BankAccount.makeCuit("20", dni)

/** A merchant created the way the CLI does (PENDING unless `account_status` is given). */
export const createMerchant = (fields: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts.Accounts
    return yield* accounts.createUser(
      Schema.decodeUnknownSync(Accounts.CreateUserRequest)({
        name: "Tienda Uno",
        email: "uno@example.com",
        cuit: cuitFor("12345678"),
        ...fields
      })
    )
  })

/** A partner registered "with support". */
export const createPartner = (fields: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth
    return yield* auth.registerPartner(
      Schema.decodeUnknownSync(Auth.RegisterPartnerRequest)({
        name: "Socio Uno",
        redirect_url: "https://socio.example.com/callback",
        webhook_url: "https://socio.example.com/hooks",
        ...fields
      })
    )
  })

type RegisteredPartner = Effect.Effect.Success<ReturnType<typeof createPartner>>

/** A `PAR-` token of `partner` for `user`, through a code and its exchange. */
export const partnerToken = (partner: RegisteredPartner, user: Ids.UserId) =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth
    const { code } = yield* auth.issueCode(partner.partner.partner_id, user)
    const grant = yield* auth.exchangeCode(
      new Auth.CodeExchangeRequest({
        code,
        client_id: partner.client_id,
        client_secret: partner.client_secret
      })
    )
    return grant.access_token
  })

/** A user token from the user's own credential. */
export const userToken = (created: {
  user: { user_id: Ids.UserId }
  client_id: string
  client_secret: string
}) =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth
    const issued = yield* auth.issueUserToken(
      created.user.user_id,
      new Auth.TokenRequest({ client_id: created.client_id, client_secret: created.client_secret })
    )
    return issued.token
  })
