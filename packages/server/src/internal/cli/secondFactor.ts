/**
 * `cobro second-factor …`: a merchant's second factor from the operator's terminal (the
 * same `SecondFactors` service as the API's /users/{user_id}/second-factor routes). Enrolling TOTP
 * prints the `otpauth://` URI and writes the QR code as SVG (`--svg FILE`, or printed); a code of
 * the new factor confirms it.
 */
import { Command, Options } from "@effect/cli"
import { SecondFactors } from "@cobro/core"
import { Console, DateTime, Effect, Schema } from "effect"
import * as fs from "node:fs/promises"
import { idFrom, userIdFrom } from "../admin/input.js"
import { json, optionalText, orUndefined, printJson, withServices } from "./shared.js"

const userId = Options.text("user-id").pipe(Options.withDescription("the merchant"))
const code = Options.text("code").pipe(Options.withDescription("a 6-digit code of the factor"))
const currentCode = optionalText(
  "current-code",
  "a code of the enrolled factor, to replace it (e-mail: `send-code` first)"
)

/** A code as typed: six digits, else an `InvalidInput` naming the option. */
const codeOf = (field: string, text: string) => idFrom(SecondFactors.Code, field)(text)

const enrolRequest = (current: string | undefined) =>
  current === undefined
    ? Effect.succeed({})
    : Effect.map(codeOf("current_code", current), (c) => ({ current_code: c }))

const stateLines = (state: SecondFactors.FactorState) =>
  [
    `enrolled: ${state.enrolled === undefined ? "none" : `${state.enrolled.kind} (since ${DateTime.formatIso(state.enrolled.enrolled_timestamp)})`}`,
    `pending:  ${state.pending === undefined ? "none" : `${state.pending.kind} (until ${DateTime.formatIso(state.pending.exp_timestamp)})`}`
  ].join("\n")

const encodeState = Schema.encodeSync(SecondFactors.FactorState)

const show = Command.make("show", { userId, json }, (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const state = yield* (yield* SecondFactors.SecondFactors).state(yield* userIdFrom(o.userId))
      if (o.json) return yield* printJson(encodeState(state))
      yield* Console.log(stateLines(state))
    })
  )
).pipe(Command.withDescription("the merchant's enrolled second factor and an enrolment in progress"))

const enrollTotp = Command.make(
  "enroll-totp",
  {
    userId,
    currentCode,
    svg: optionalText("svg", "write the QR code to this file (SVG) instead of printing it"),
    json
  },
  (o) =>
    withServices(() =>
      Effect.gen(function* () {
        const request = yield* enrolRequest(orUndefined(o.currentCode))
        const started = yield* (yield* SecondFactors.SecondFactors).enrolTotp(
          yield* userIdFrom(o.userId),
          request
        )
        const file = orUndefined(o.svg)
        if (file !== undefined) yield* Effect.promise(() => fs.writeFile(file, started.qr_svg))
        if (o.json) return yield* printJson(Schema.encodeSync(SecondFactors.TotpEnrolment)(started))
        yield* Console.log(
          [
            "Scan the QR code (or type the secret) in an authenticator app, then confirm with its code:",
            `  cobro second-factor confirm --user-id ${o.userId} --code NNNNNN`,
            `uri:     ${started.otpauth_uri}`,
            `secret:  ${started.secret}`,
            `expires: ${DateTime.formatIso(started.exp_timestamp)}`,
            file === undefined ? started.qr_svg : `qr code: ${file}`
          ].join("\n")
        )
      })
    )
).pipe(Command.withDescription("start a TOTP enrolment: prints the otpauth:// URI and the QR code (SVG)"))

const enrollEmail = Command.make("enroll-email", { userId, currentCode, json }, (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const request = yield* enrolRequest(orUndefined(o.currentCode))
      const started = yield* (yield* SecondFactors.SecondFactors).enrolEmail(
        yield* userIdFrom(o.userId),
        request
      )
      if (o.json) return yield* printJson(Schema.encodeSync(SecondFactors.EmailEnrolment)(started))
      yield* Console.log(
        `a code went to ${started.email} (valid until ${DateTime.formatIso(started.exp_timestamp)}); confirm with it`
      )
    })
  )
).pipe(Command.withDescription("start an e-mail enrolment: a code goes to the merchant's e-mail"))

const confirm = Command.make("confirm", { userId, code, json }, (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const state = yield* (yield* SecondFactors.SecondFactors).confirm(yield* userIdFrom(o.userId), {
        code: yield* codeOf("code", o.code)
      })
      if (o.json) return yield* printJson(encodeState(state))
      yield* Console.log(stateLines(state))
    })
  )
).pipe(Command.withDescription("confirm the enrolment in progress with a code of the new factor"))

const sendCode = Command.make("send-code", { userId }, (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const sent = yield* (yield* SecondFactors.SecondFactors).sendFactorCode(yield* userIdFrom(o.userId))
      yield* Console.log(
        `a code went to ${sent.email} (valid until ${DateTime.formatIso(sent.exp_timestamp)})`
      )
    })
  )
).pipe(Command.withDescription("e-mail a code of the enrolled e-mail factor (to remove or replace it)"))

const remove = Command.make("remove", { userId, code, json }, (o) =>
  withServices(() =>
    Effect.gen(function* () {
      const state = yield* (yield* SecondFactors.SecondFactors).remove(yield* userIdFrom(o.userId), {
        code: yield* codeOf("code", o.code)
      })
      if (o.json) return yield* printJson(encodeState(state))
      yield* Console.log(stateLines(state))
    })
  )
).pipe(Command.withDescription("remove the enrolled factor with a code of it"))

export const secondFactor = Command.make("second-factor").pipe(
  Command.withDescription(
    "a merchant's second factor (TOTP or e-mail codes), which production's payout accounts need"
  ),
  Command.withSubcommands([show, enrollTotp, enrollEmail, confirm, sendCode, remove])
)
