/**
 * Where reconciliation finds a gap on BIND: a transfer BIND's statement holds that no notification
 * brought is credited from the statement (`Reconciliation.run`), and BIND is asked to conciliate
 * it ("Conciliar transferencia": BIND books it as notified and sends its notification again, which
 * credits nothing twice). What BIND answers is logged and returned for `cobro bank reconcile`.
 */
import { BindBank } from "@cobro/bank-bind"
import type { Reconciliation } from "@cobro/core"
import { Effect, Option } from "effect"

export type Conciliation =
  | { readonly _tag: "Answered"; readonly answer: BindBank.Conciliation }
  | { readonly _tag: "Failed"; readonly error: string }

/** Conciliates the transfers `report` found; none when there is nothing to ask or the bank is not BIND. */
export const conciliateFound = (report: Reconciliation.Report): Effect.Effect<Option.Option<Conciliation>> =>
  Effect.gen(function* () {
    const bind = yield* Effect.serviceOption(BindBank.BindBank)
    if (Option.isNone(bind) || report._tag !== "Reconciled" || report.found.length === 0) return Option.none()
    const ids = report.found.map((f) => f.bank_transaction_id)
    const answered = yield* Effect.either(bind.value.conciliate(ids))
    if (answered._tag === "Left") {
      yield* Effect.logWarning(`asking BIND to conciliate transfers failed: ${answered.left.message}`).pipe(
        Effect.annotateLogs({ ids: ids.join(",") })
      )
      return Option.some({ _tag: "Failed", error: answered.left.message } satisfies Conciliation)
    }
    const answer = answered.right
    yield* (answer.conError.length > 0 ? Effect.logWarning : Effect.logInfo)(
      "BIND's answer to Conciliar transferencia"
    ).pipe(
      Effect.annotateLogs({
        conciliadas: answer.conciliadas.join(","),
        noConciliadas: answer.noConciliadas.join(","),
        conError: answer.conError.join(",")
      })
    )
    return Option.some({ _tag: "Answered", answer } satisfies Conciliation)
  })
