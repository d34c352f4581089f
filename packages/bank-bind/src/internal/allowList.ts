/**
 * The allow-list of the addresses BIND notifies from: IPv4/IPv6 addresses and CIDR blocks, on
 * node's `BlockList`. An IPv4-mapped IPv6 client address (`::ffff:10.0.0.1`, how a dual-stack
 * listener reports IPv4 peers) is checked as the IPv4 address it carries.
 */
import { Either } from "effect"
import { BlockList, isIP } from "node:net"

export interface AllowList {
  /** The entries as configured. */
  readonly entries: ReadonlyArray<string>
  /** Whether `address` may notify; always true for an empty list. */
  readonly allows: (address: string) => boolean
}

/** Parses `a, b/24, …`; the first entry that is neither an address nor a CIDR block is refused. */
export const parseAllowList = (text: string): Either.Either<ReadonlyArray<string>, string> => {
  const entries = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  for (const entry of entries) {
    const [address = "", prefix] = entry.split("/")
    const family = isIP(address)
    const bits = prefix === undefined ? undefined : Number(prefix)
    const max = family === 4 ? 32 : 128
    if (family === 0 || (bits !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= max)))
      return Either.left(`"${entry}" is not an IP address or a CIDR block (e.g. 200.0.113.0/24)`)
  }
  return Either.right(entries)
}

const unmapped = (address: string) => address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "")

export const make = (entries: ReadonlyArray<string>): AllowList => {
  const list = new BlockList()
  for (const entry of entries) {
    const [address = "", prefix] = entry.split("/")
    const type = isIP(address) === 4 ? "ipv4" : "ipv6"
    if (prefix === undefined) list.addAddress(address, type)
    else list.addSubnet(address, Number(prefix), type)
  }
  return {
    entries,
    allows: (address) => {
      if (entries.length === 0) return true
      const bare = unmapped(address)
      const family = isIP(bare)
      return family !== 0 && list.check(bare, family === 4 ? "ipv4" : "ipv6")
    }
  }
}
