/**
 * What kind of address an IP is, for the SSRF guard: only `public` addresses may receive webhooks
 * outside sandbox mode. The tables follow IANA's special-purpose registries (IPv4 and IPv6); IPv6
 * forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`) are judged by the IPv4 address inside, and IPv6 outside the global unicast block
 * `2000::/3` is reserved.
 */
import { Option } from "effect"

export type AddressClass =
  "public" | "unspecified" | "loopback" | "private" | "link_local" | "cgnat" | "multicast" | "reserved"

export interface ParsedAddress {
  readonly family: 4 | 6
  /** 4 or 16 bytes, network order. */
  readonly bytes: Uint8Array
}

const parseIPv4Bytes = (text: string): Uint8Array | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  const bytes = new Uint8Array(4)
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!
    // Canonical decimal only: resolvers and the URL parser never produce other forms, and a
    // lenient parse (octal, hex) is how guards get fooled.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined
    const n = Number(part)
    if (n > 255) return undefined
    bytes[i] = n
  }
  return bytes
}

const parseIPv6Bytes = (input: string): Uint8Array | undefined => {
  let text = input
  const zone = text.indexOf("%")
  if (zone >= 0) text = text.slice(0, zone)
  if (text.length === 0) return undefined
  // A trailing dotted IPv4 takes the place of the last two groups.
  let tail: Array<number> = []
  const lastColon = text.lastIndexOf(":")
  if (text.includes(".", lastColon)) {
    const embedded = parseIPv4Bytes(text.slice(lastColon + 1))
    if (embedded === undefined) return undefined
    tail = [(embedded[0]! << 8) | embedded[1]!, (embedded[2]! << 8) | embedded[3]!]
    const rest = text.slice(0, lastColon + 1)
    text = rest.endsWith("::") ? rest : rest.slice(0, -1)
  }
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (s: string): Array<number> | undefined => {
    if (s === "") return []
    const out: Array<number> = []
    for (const g of s.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined
      out.push(parseInt(g, 16))
    }
    return out
  }
  const head = groupsOf(halves[0]!)
  const rest = halves.length === 2 ? groupsOf(halves[1]!) : []
  if (head === undefined || rest === undefined) return undefined
  const explicit = head.length + rest.length + tail.length
  let groups: Array<number>
  if (halves.length === 2) {
    if (explicit > 7) return undefined
    groups = [...head, ...Array<number>(8 - explicit).fill(0), ...rest, ...tail]
  } else {
    if (explicit !== 8) return undefined
    groups = [...head, ...tail]
  }
  const bytes = new Uint8Array(16)
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8
    bytes[2 * i + 1] = g & 0xff
  })
  return bytes
}

/** An IPv4 or IPv6 literal (brackets and a zone id allowed); none for anything else. */
export const parse = (text: string): Option.Option<ParsedAddress> => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  if (bare.includes(":")) {
    const bytes = parseIPv6Bytes(bare)
    return bytes === undefined ? Option.none() : Option.some({ family: 6, bytes })
  }
  const bytes = parseIPv4Bytes(bare)
  return bytes === undefined ? Option.none() : Option.some({ family: 4, bytes })
}

interface Range {
  readonly prefix: Uint8Array
  readonly bits: number
}

const v4 = (cidr: string): Range => {
  const [address, bits] = cidr.split("/")
  return { prefix: parseIPv4Bytes(address!)!, bits: Number(bits) }
}
const v6 = (cidr: string): Range => {
  const [address, bits] = cidr.split("/")
  return { prefix: parseIPv6Bytes(address!)!, bits: Number(bits) }
}

const inRange = (bytes: Uint8Array, range: Range): boolean => {
  let bits = range.bits
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff
    if ((bytes[i]! & mask) !== (range.prefix[i]! & mask)) return false
  }
  return true
}

/** IPv4 special-purpose blocks; anything else is public. */
export const ipv4Table: ReadonlyArray<readonly [Range, AddressClass]> = [
  [v4("0.0.0.0/8"), "unspecified"], // "this network"
  [v4("10.0.0.0/8"), "private"],
  [v4("100.64.0.0/10"), "cgnat"], // shared address space (carrier-grade NAT)
  [v4("127.0.0.0/8"), "loopback"],
  [v4("169.254.0.0/16"), "link_local"], // includes cloud metadata at 169.254.169.254
  [v4("172.16.0.0/12"), "private"],
  [v4("192.0.0.0/24"), "reserved"], // IETF protocol assignments
  [v4("192.0.2.0/24"), "reserved"], // TEST-NET-1
  [v4("192.88.99.0/24"), "reserved"], // 6to4 relay anycast (deprecated)
  [v4("192.168.0.0/16"), "private"],
  [v4("198.18.0.0/15"), "reserved"], // benchmarking
  [v4("198.51.100.0/24"), "reserved"], // TEST-NET-2
  [v4("203.0.113.0/24"), "reserved"], // TEST-NET-3
  [v4("224.0.0.0/4"), "multicast"],
  [v4("240.0.0.0/4"), "reserved"] // future use, and the limited broadcast 255.255.255.255
]

/** Where an IPv6 block carries an IPv4 address: the byte offset of the 4 bytes. */
const embedding: ReadonlyArray<readonly [Range, number]> = [
  [v6("::ffff:0:0/96"), 12], // IPv4-mapped
  [v6("64:ff9b::/96"), 12], // NAT64 well-known prefix
  [v6("2002::/16"), 2] // 6to4
]

/** IPv6 special-purpose blocks, first match wins; outside them, only `2000::/3` is public. */
export const ipv6Table: ReadonlyArray<readonly [Range, AddressClass]> = [
  [v6("::/128"), "unspecified"],
  [v6("::1/128"), "loopback"],
  [v6("::/96"), "reserved"], // IPv4-compatible (deprecated)
  [v6("64:ff9b:1::/48"), "reserved"], // local-use NAT64
  [v6("100::/64"), "reserved"], // discard-only
  [v6("2001::/23"), "reserved"], // IETF protocol assignments, Teredo included
  [v6("2001:db8::/32"), "reserved"], // documentation
  [v6("3fff::/20"), "reserved"], // documentation
  [v6("5f00::/16"), "reserved"], // segment routing SIDs
  [v6("fc00::/7"), "private"], // unique local
  [v6("fe80::/10"), "link_local"],
  [v6("fec0::/10"), "private"], // site-local (deprecated)
  [v6("ff00::/8"), "multicast"]
]

const globalUnicast = v6("2000::/3")

const classifyV4 = (bytes: Uint8Array): AddressClass =>
  ipv4Table.find(([range]) => inRange(bytes, range))?.[1] ?? "public"

const classifyV6 = (bytes: Uint8Array): AddressClass => {
  for (const [range, offset] of embedding) {
    if (inRange(bytes, range)) return classifyV4(bytes.subarray(offset, offset + 4))
  }
  const listed = ipv6Table.find(([range]) => inRange(bytes, range))
  if (listed !== undefined) return listed[1]
  return inRange(bytes, globalUnicast) ? "public" : "reserved"
}

/** The class of a parsed address. */
export const classifyParsed = (address: ParsedAddress): AddressClass =>
  address.family === 4 ? classifyV4(address.bytes) : classifyV6(address.bytes)

/** The class of an IP literal; none when `text` is not one (a hostname). */
export const classify = (text: string): Option.Option<AddressClass> => Option.map(parse(text), classifyParsed)

/** Whether `text` is an IP literal of a public address. A hostname is not (it must be resolved first). */
export const isPublic = (text: string): boolean => Option.getOrElse(classify(text), () => null) === "public"

/** How a class reads in an error message. */
export const describe = (cls: AddressClass): string =>
  ({
    public: "a public address",
    unspecified: "an unspecified address",
    loopback: "a loopback address",
    private: "a private address",
    link_local: "a link-local address",
    cgnat: "a carrier-grade NAT (shared) address",
    multicast: "a multicast address",
    reserved: "a reserved address"
  })[cls]
