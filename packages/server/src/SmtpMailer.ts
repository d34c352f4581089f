/**
 * Core's `Mailer` port: SMTP through `nodemailer` when `COBRO_SMTP_URL` is set (e-mailed second
 * factor codes). Without it the sandbox logs each message (its codes are visible, as every
 * sandbox code is) and production refuses to send (`second_factor.unavailable`): e-mail codes
 * need a mail server there, TOTP does not.
 */
import { Mailer } from "@cobro/core"
import { Config, ConfigError, Effect, Either, Layer, Option, Redacted } from "effect"
import nodemailer from "nodemailer"

/** The variables, for messages and docs. */
export const variables = { smtpUrl: "COBRO_SMTP_URL", smtpFrom: "COBRO_SMTP_FROM" } as const

/** Each variable's default and meaning, for `cobro serve --help`. */
export const variableHelp: {
  readonly [K in keyof typeof variables]: readonly [fallback: string, meaning: string]
} = {
  smtpUrl: ["none: no e-mail codes in production", "smtp(s)://user:pass@host:port for e-mailed 2FA codes"],
  smtpFrom: ["cobro <no-reply@HOST of COBRO_PUBLIC_URL>", "the sender of the e-mails"]
}

export interface SmtpSettings {
  readonly url: Redacted.Redacted
  readonly from: Option.Option<string>
}

/** `COBRO_SMTP_URL` (smtp: or smtps:) and `COBRO_SMTP_FROM`; none without a URL. */
export const config: Config.Config<Option.Option<SmtpSettings>> = Config.all({
  url: Config.option(
    Config.redacted(variables.smtpUrl).pipe(
      Config.mapOrFail((url) => {
        const text = Redacted.value(url)
        return /^smtps?:\/\/[^/\s]+/.test(text)
          ? Either.right(url)
          : Either.left(ConfigError.InvalidData([variables.smtpUrl], "must be an smtp:// or smtps:// URL"))
      })
    )
  ),
  from: Config.option(Config.nonEmptyString(variables.smtpFrom))
}).pipe(Config.map(({ from, url }) => Option.map(url, (u) => ({ url: u, from }))))

/** Mail out over SMTP; the connection pool closes with the layer. */
export const layerSmtp = (settings: SmtpSettings, from: string): Layer.Layer<Mailer.Mailer> =>
  Layer.scoped(
    Mailer.Mailer,
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => nodemailer.createTransport(Redacted.value(settings.url))),
        (transport) => Effect.sync(() => transport.close())
      ),
      (transport) =>
        Mailer.Mailer.of({
          send: (message) =>
            Effect.tryPromise({
              try: () => transport.sendMail({ from, ...message }),
              catch: (e) =>
                new Mailer.MailerError({
                  message: `the mail server did not take the message: ${e instanceof Error ? e.message : String(e)}`
                })
            }).pipe(Effect.asVoid, Effect.withSpan("Mailer.send"))
        })
    )
  )

/** The sandbox without a mail server: each message is a log line (its code included). */
export const layerLog: Layer.Layer<Mailer.Mailer> = Layer.succeed(
  Mailer.Mailer,
  Mailer.Mailer.of({
    send: (message) =>
      Effect.logInfo("e-mail not sent (sandbox without COBRO_SMTP_URL)").pipe(
        Effect.annotateLogs({ to: message.to, subject: message.subject, text: message.text })
      )
  })
)

/** Production without a mail server: no e-mail can be sent. */
export const layerNone: Layer.Layer<Mailer.Mailer> = Layer.succeed(
  Mailer.Mailer,
  Mailer.Mailer.of({
    send: () =>
      Effect.fail(
        new Mailer.MailerError({
          message: `no mail server is configured (${variables.smtpUrl}): e-mail codes cannot be sent; use TOTP`
        })
      )
  })
)

/** The mailer of the configuration: SMTP when set, else the mode's fallback. */
export const layer = (
  mode: "sandbox" | "production",
  publicUrl: string
): Layer.Layer<Mailer.Mailer, ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.map(config, (settings) =>
      Option.match(settings, {
        onNone: () => (mode === "sandbox" ? layerLog : layerNone),
        onSome: (s) =>
          layerSmtp(
            s,
            Option.getOrElse(s.from, () => `cobro <no-reply@${new URL(publicUrl).hostname}>`)
          )
      })
    )
  )
