/**
 * The `cobro` help, as plain text at most 100 columns wide. `@effect/cli`'s own help puts its
 * type boilerplate ("A user-defined piece of text.") before every description, shows a subcommand's
 * usage without its parents (`$ create …`) and lists commands with their whole usage on one line
 * (200 columns). This renders the library's help documents (so every option and command added
 * later appears) without that boilerplate, with the full command in the usage, wrapped.
 */
import { CliConfig, CommandDescriptor, HelpDoc, Usage } from "@effect/cli"
import type { Span } from "@effect/cli/HelpDoc/Span"
import { Option } from "effect"

export const WIDTH = 100

/** The library's descriptions of a value's type, which say nothing an option's own does not. */
const boilerplate = new Set([
  "A user-defined piece of text.",
  "A true or false value.",
  "An integer.",
  "A floating point number."
])

const spanText = (span: Span): string => {
  switch (span._tag) {
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    case "Text":
    case "URI":
      return span.value
    default:
      return spanText(span.value)
  }
}

/** `text` in lines of at most `WIDTH` columns, each starting with `indent` (`first` on the first). */
export const wrap = (text: string, indent: string, first: string = indent): Array<string> => {
  const lines: Array<string> = []
  let line = first
  let empty = true
  for (const word of splitUsage(text)) {
    if (!empty && line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = indent
      empty = true
    }
    line += (empty ? "" : " ") + word
    empty = false
  }
  lines.push(line)
  return lines
}

/** Words, keeping `[--status pending | delivered]` and `<user_id>` whole. */
const splitUsage = (text: string): Array<string> => {
  const words: Array<string> = []
  let depth = 0
  let word = ""
  for (const char of text) {
    if (char === "[" || char === "<" || char === "(") depth++
    if (char === "]" || char === ">" || char === ")") depth = Math.max(0, depth - 1)
    if (char === " " && depth === 0) {
      if (word !== "") words.push(word)
      word = ""
    } else word += char
  }
  if (word !== "") words.push(word)
  return words
}

/** A help document as lines; the `COMMANDS` section (usage of every descendant) is left out. */
const render = (doc: HelpDoc.HelpDoc, indent: string, out: Array<string>, state: { skip: boolean }): void => {
  switch (doc._tag) {
    case "Empty":
      return
    case "Header": {
      const title = spanText(doc.value)
      state.skip = title === "COMMANDS"
      if (!state.skip) out.push("", title)
      return
    }
    case "Paragraph": {
      const text = spanText(doc.value)
      if (state.skip || boilerplate.has(text) || text === "") return
      out.push(...wrap(text, indent))
      return
    }
    case "DescriptionList":
      if (state.skip) return
      for (const [span, body] of doc.definitions) {
        out.push(...wrap(spanText(span), `${indent}    `, indent))
        render(body, `${indent}    `, out, state)
      }
      return
    case "Enumeration":
      if (state.skip) return
      for (const element of doc.elements) render(element, `${indent}  `, out, state)
      return
    case "Sequence":
      render(doc.left, indent, out, state)
      render(doc.right, indent, out, state)
      return
  }
}

type Descriptor = CommandDescriptor.Command<unknown>

/** The shape of a descriptor at run time (the library exposes one level of subcommands only). */
type Node =
  | { readonly _tag: "Standard" | "GetUserInput"; readonly name: string }
  | { readonly _tag: "Map"; readonly command: Node }
  | { readonly _tag: "Subcommands"; readonly parent: Node; readonly children: ReadonlyArray<Node> }

const nameOf = (node: Node): string =>
  node._tag === "Map" ? nameOf(node.command) : node._tag === "Subcommands" ? nameOf(node.parent) : node.name

/** The direct subcommands of `descriptor`, in the order they were declared. */
const children = (descriptor: Descriptor): Array<[string, Descriptor]> => {
  const node = descriptor as unknown as Node
  const of = (n: Node): ReadonlyArray<Node> =>
    n._tag === "Map" ? of(n.command) : n._tag === "Subcommands" ? n.children : []
  return of(node).map((child) => [nameOf(child), child as unknown as Descriptor])
}

/** The paragraphs of a help document with the header each is under, in order. */
const paragraphs = (doc: HelpDoc.HelpDoc, header: string, out: Array<[string, string]>): string => {
  switch (doc._tag) {
    case "Header":
      return spanText(doc.value)
    case "Paragraph":
      out.push([header, spanText(doc.value)])
      return header
    case "Sequence":
      return paragraphs(doc.right, paragraphs(doc.left, header, out), out)
    default:
      return header
  }
}

/**
 * The description of a command: the first paragraph under its `DESCRIPTION` header, whole (the
 * commands' list wraps it; it once kept only the first of its wrapped lines).
 */
const descriptionOf = (descriptor: Descriptor): string => {
  const found: Array<[string, string]> = []
  paragraphs(CommandDescriptor.getHelp(descriptor, CliConfig.defaultConfig), "", found)
  return found.find(([header, text]) => header === "DESCRIPTION" && text !== "")?.[1] ?? ""
}

/** Every command under `descriptor` with its description, `users create` style. */
const commandList = (path: ReadonlyArray<string>, descriptor: Descriptor): Array<[string, string]> =>
  children(descriptor).flatMap(([name, child]) => {
    const full = [...path, name]
    const grand = children(child)
    return grand.length === 0 ? [[full.join(" "), descriptionOf(child)]] : commandList(full, child)
  })

/** The command at `path` (names of subcommands) under `root`, and how much of the path it took. */
export const find = (
  root: { readonly descriptor: unknown },
  args: ReadonlyArray<string>
): { readonly path: ReadonlyArray<string>; readonly descriptor: Descriptor } => {
  let descriptor = root.descriptor as Descriptor
  const path: Array<string> = []
  for (const arg of args) {
    const next = Option.fromNullable(children(descriptor).find(([name]) => name === arg))
    if (Option.isNone(next)) break
    path.push(arg)
    descriptor = next.value[1]
  }
  return { path, descriptor }
}

/** Whether `descriptor` only groups subcommands. */
export const isGroup = (descriptor: Descriptor): boolean => children(descriptor).length > 0

/** The help of `cobro <path>`, plain text; `extra` is appended (e.g. the environment of `serve`). */
export const text = (
  executable: string,
  version: string,
  path: ReadonlyArray<string>,
  descriptor: Descriptor,
  extra: ReadonlyArray<string> = []
): string => {
  const lines: Array<string> = [`${[executable, ...path].join(" ")} (${executable} ${version})`, "", "USAGE"]
  const group = isGroup(descriptor)
  const usage = group
    ? `${[executable, ...path].join(" ")} <command> [options]`
    : [
        executable,
        ...path.slice(0, -1),
        spanText(HelpDoc.getSpan(Usage.getHelp(CommandDescriptor.getUsage(descriptor))))
      ].join(" ")
  lines.push(...wrap(usage, "      ", "  $ "))
  const body: Array<string> = []
  render(CommandDescriptor.getHelp(descriptor, CliConfig.defaultConfig), "  ", body, { skip: false })
  lines.push(...body)
  if (group) {
    const list = commandList(path, descriptor)
    const width = Math.min(28, Math.max(...list.map(([name]) => name.length)) + 2)
    lines.push("", "COMMANDS")
    for (const [name, description] of list) {
      if (name.length >= width) lines.push(`  ${name}`, ...wrap(description, `  ${" ".repeat(width)}`))
      else lines.push(...wrap(description, `  ${" ".repeat(width)}`, `  ${name.padEnd(width)}`))
    }
    lines.push("", `Run \`${[executable, ...path].join(" ")} <command> --help\` for a command's options.`)
  }
  lines.push(...extra)
  return lines.join("\n")
}

/** Every command under `root` (groups left out), e.g. `["users", "create"]`. */
export const leaves = (root: { readonly descriptor: unknown }): Array<Array<string>> =>
  commandList([], root.descriptor as Descriptor).map(([name]) => name.split(" "))
