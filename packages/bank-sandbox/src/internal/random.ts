/** The sandbox bank's random draws: the CVUs and aliases it issues, and senders nobody named. */
import { Effect, Random } from "effect"
import { BankAccount, BankProvider, Ids } from "@cobro/core"
import { ALIAS_WORDS } from "./aliasWords.js"

/** The PSP code (entity 000, PSP 0003) of every CVU the sandbox issues. */
const PSP_CODE = "0000003"

const randomDecimal = (n: number): Effect.Effect<string> => Ids.randomDigits(10, n)

export const randomCvu: Effect.Effect<BankAccount.Cvu> = Effect.map(randomDecimal(13), (account) =>
  BankAccount.makeCvu(PSP_CODE, account)
)

/** Three words, in one draw. */
export const randomAlias: Effect.Effect<BankAccount.Alias> = Effect.map(
  Random.nextIntBetween(0, ALIAS_WORDS.length ** 3),
  (n) => {
    const size = ALIAS_WORDS.length
    return BankAccount.Alias.make(
      [
        ALIAS_WORDS[n % size],
        ALIAS_WORDS[Math.floor(n / size) % size],
        ALIAS_WORDS[Math.floor(n / size ** 2)]
      ].join(".")
    )
  }
)

/** A random CBU of a real-looking bank (285) and branch, for senders nobody named. */
export const randomCbu: Effect.Effect<string> = Effect.zipWith(
  randomDecimal(4),
  randomDecimal(13),
  (branch, account) => BankAccount.makeCbu(`285${branch}`, account)
)

export const randomCuit: Effect.Effect<BankAccount.Cuit> = Effect.zipWith(
  Random.choice(["20", "27"] as const),
  randomDecimal(8),
  (prefix, dni) => BankAccount.makeCuit(prefix, dni)
)

/** Attempts at drawing an unused CVU or alias before giving up with `unavailable`. */
const MAX_ATTEMPTS = 1000

/** Draws from `generate` until the value is not taken. */
export const fresh = <A>(
  generate: Effect.Effect<A>,
  isTaken: (a: A) => boolean,
  what: string
): Effect.Effect<A, BankProvider.BankError> =>
  Effect.gen(function* () {
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const candidate = yield* generate
      if (!isTaken(candidate)) return candidate
    }
    return yield* new BankProvider.BankError({
      reason: "unavailable",
      message: `sandbox could not allocate an unused ${what}`
    })
  })
