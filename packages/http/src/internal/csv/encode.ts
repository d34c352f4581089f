/**
 * RFC 4180 text: fields separated by commas, records ended by CRLF, a field quoted when it holds
 * a comma, a quote, CR or LF (its quotes doubled). Text that came from outside cobro (merchants,
 * payers, the bank) is neutralized against spreadsheet formula injection first.
 */

/** One column of an export: its header and its value in a row (`undefined`: an empty field). */
export interface Column<A> {
  readonly name: string
  readonly value: (row: A) => string | undefined
  /**
   * The value is text someone outside cobro wrote (a motive, a payer's name, a failure reason):
   * a leading `=`, `+`, `-`, `@`, tab or CR is prefixed with `'`, so that a spreadsheet shows it
   * as text instead of running it as a formula. Amounts, dates, states and ids cobro writes are
   * never changed.
   */
  readonly text?: boolean
}

const needsQuotes = /[",\r\n]/
const formulaStart = /^[=+\-@\t\r]/

/** A field as RFC 4180 writes it. */
export const field = (value: string): string =>
  needsQuotes.test(value) ? `"${value.replaceAll('"', '""')}"` : value

/** Free text made inert in a spreadsheet: `'` before a leading formula character. */
export const neutralize = (value: string): string => (formulaStart.test(value) ? `'${value}` : value)

/** The header record of `columns`, CRLF included. */
export const header = <A>(columns: ReadonlyArray<Column<A>>): string =>
  `${columns.map((c) => field(c.name)).join(",")}\r\n`

/** The records of `rows`, each CRLF-ended, as one piece of text. */
export const records = <A>(columns: ReadonlyArray<Column<A>>, rows: Iterable<A>): string => {
  let out = ""
  for (const row of rows) {
    let line = ""
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i]!
      const value = column.value(row)
      const text = value === undefined ? "" : column.text === true ? neutralize(value) : value
      line += i === 0 ? field(text) : `,${field(text)}`
    }
    out += `${line}\r\n`
  }
  return out
}
