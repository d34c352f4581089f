/**
 * Mail out: the e-mail second factor sends its codes through it. A port; the reference server
 * backs it with SMTP (`nodemailer`, `COBRO_SMTP_URL`).
 */
import { Context, type Effect, Schema } from "effect"

/** The message could not be handed to the mail server (or none is configured). */
export class MailerError extends Schema.TaggedError<MailerError>()("MailerError", {
  message: Schema.String
}) {}

export interface Message {
  readonly to: string
  readonly subject: string
  readonly text: string
}

export class Mailer extends Context.Tag("@cobro/core/Mailer")<
  Mailer,
  {
    /** Hands `message` to the mail server; succeeds once the server accepted it. */
    readonly send: (message: Message) => Effect.Effect<void, MailerError>
  }
>() {}
