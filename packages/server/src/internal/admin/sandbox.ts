/**
 * The sandbox bank's accounts from the operator's side (`cobro sandbox bank-account`): register
 * one for a merchant's tests, list a merchant's. The same service as `POST /sandbox/bank-accounts`
 * (same checks, same cap); the running server finds an account registered here in storage the
 * first time it is asked about it.
 */
import { Errors, Spans } from "@cobro/core"
import { SandboxAccount, SandboxAccounts } from "@cobro/bank-sandbox"
import { DateTime, Effect, ParseResult, Schema } from "effect"
import { userIdFrom } from "./input.js"
import { sandboxOnly } from "./sandboxDrive.js"

export interface SandboxAccountInput {
  readonly user_id: string
  readonly cbu?: string | undefined
  readonly alias?: string | undefined
  readonly holder_name?: string | undefined
  readonly cuit?: string | undefined
}

/** An account as the CLI prints it. */
export interface SandboxAccountView {
  readonly cbu: string
  readonly alias: string
  readonly holder_name: string
  readonly cuit: string
  readonly user_id: string
  readonly created_at: string
}

const view = (a: SandboxAccount.SandboxAccount): SandboxAccountView => ({
  cbu: a.cbu,
  alias: a.alias,
  holder_name: a.holder_name,
  cuit: a.cuit,
  user_id: a.user_id,
  created_at: DateTime.formatIso(a.creation_timestamp)
})

const service = sandboxOnly(
  SandboxAccounts.SandboxAccounts,
  "sandbox bank accounts",
  "sandbox mode on the sandbox bank (COBRO_MODE=sandbox, COBRO_BANK=sandbox)"
)

const decodeRequest = (input: SandboxAccountInput) =>
  Schema.decodeUnknown(SandboxAccount.RegisterRequest)(
    Object.fromEntries(
      (["cbu", "alias", "holder_name", "cuit"] as const).flatMap((k) =>
        input[k] === undefined ? [] : [[k, input[k]]]
      )
    ),
    { errors: "first" }
  ).pipe(
    Effect.mapError((error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      return Errors.InvalidInput.of(
        issue === undefined || issue.path.length === 0 ? "body" : issue.path.map(String).join("."),
        issue?.message ?? "is invalid"
      )
    })
  )

/** Registers an account at the sandbox bank for `input.user_id`'s tests. */
export const registerSandboxAccount = Spans.fn("Admin.registerSandboxAccount")(function* (
  input: SandboxAccountInput
) {
  const accounts = yield* service
  const owner = yield* userIdFrom(input.user_id)
  const request = yield* decodeRequest(input)
  return view(yield* accounts.register(owner, request))
})

/** The merchant's registered accounts, oldest first. */
export const listSandboxAccounts = Spans.fn("Admin.listSandboxAccounts")(function* (userId: string) {
  const accounts = yield* service
  return (yield* accounts.list(yield* userIdFrom(userId))).map(view)
})
