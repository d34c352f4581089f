/**
 * What kind of address an IP is, for the SSRF guard: only `public` addresses may receive webhooks
 * outside sandbox mode. The tables follow IANA's special-purpose registries (IPv4 and IPv6); IPv6
 * forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`) are judged by the IPv4 address inside, and IPv6 outside the global unicast block
 * `2000::/3` is reserved.
 *
 * Parsing is `node:net`'s `isIP` (canonical dotted decimal only for IPv4: resolvers and the URL
 * parser never produce other forms, and a lenient parse, octal or hex, is how guards get fooled);
 * matching is `node:net`'s `BlockList`. Core imports `node:net` here only (see docs/decisions/0028-ssrf-classifier.md).
 */
import { Option } from "effect"
import { BlockList, isIP } from "node:net"

export type AddressClass =
  "public" | "unspecified" | "loopback" | "private" | "link_local" | "cgnat" | "multicast" | "reserved"

export interface ParsedAddress {
  readonly family: 4 | 6
  /** 4 or 16 bytes, network order. */
  readonly bytes: Uint8Array
  /** The address as `BlockList` reads it: without brackets or zone id. */
  readonly address: string
}

/** `a.b.c.d/n`, or `x:y::/n`, and its class. */
type Entry = readonly [cidr: string, cls: AddressClass]

/** IPv4 special-purpose blocks; anything else is public. */
export const ipv4Table: ReadonlyArray<Entry> = [
  ["0.0.0.0/8", "unspecified"], // "this network"
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "cgnat"], // shared address space (carrier-grade NAT)
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link_local"], // includes cloud metadata at 169.254.169.254
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "reserved"], // IETF protocol assignments
  ["192.0.2.0/24", "reserved"], // TEST-NET-1
  ["192.88.99.0/24", "reserved"], // 6to4 relay anycast (deprecated)
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "reserved"], // benchmarking
  ["198.51.100.0/24", "reserved"], // TEST-NET-2
  ["203.0.113.0/24", "reserved"], // TEST-NET-3
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reserved"] // future use, and the limited broadcast 255.255.255.255
]

/**
 * IPv6 special-purpose blocks; outside them, only `2000::/3` is public. They do not overlap but
 * for `::/128` and `::1/128` inside `::/96`, which `classes` checks first.
 */
export const ipv6Table: ReadonlyArray<Entry> = [
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["::/96", "reserved"], // IPv4-compatible (deprecated)
  ["64:ff9b:1::/48", "reserved"], // local-use NAT64
  ["100::/64", "reserved"], // discard-only
  ["2001::/23", "reserved"], // IETF protocol assignments, Teredo included
  ["2001:db8::/32", "reserved"], // documentation
  ["3fff::/20", "reserved"], // documentation
  ["5f00::/16", "reserved"], // segment routing SIDs
  ["fc00::/7", "private"], // unique local
  ["fe80::/10", "link_local"],
  ["fec0::/10", "private"], // site-local (deprecated)
  ["ff00::/8", "multicast"]
]

/** The IPv6 blocks that carry an IPv4 address, each as the IPv6 form of an IPv4 block `a.b.c.d/n`. */
const embeddings: ReadonlyArray<readonly [block: string, v4InV6: (v4: string, bits: number) => string]> = [
  ["::ffff:0:0/96", (v4, bits) => `::ffff:${v4}/${96 + bits}`], // IPv4-mapped
  ["64:ff9b::/96", (v4, bits) => `64:ff9b::${v4}/${96 + bits}`], // NAT64 well-known prefix
  ["2002::/16", (v4, bits) => `2002:${hexGroups(v4)}::/${16 + bits}`] // 6to4
]

const hexGroups = (v4: string): string => {
  const [a, b, c, d] = v4.split(".").map(Number) as [number, number, number, number]
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
}

const blockList = (cidrs: ReadonlyArray<string>): BlockList => {
  const list = new BlockList()
  for (const cidr of cidrs) {
    const [network, bits] = cidr.split("/") as [string, string]
    list.addSubnet(network, Number(bits), network.includes(":") ? "ipv6" : "ipv4")
  }
  return list
}

/** The special-purpose classes, in the order they are checked: the first that holds an address wins. */
const classes: ReadonlyArray<readonly [AddressClass, BlockList]> = (
  ["unspecified", "loopback", "private", "link_local", "cgnat", "multicast", "reserved"] as const
).map((cls) => {
  const v4 = ipv4Table.filter(([, c]) => c === cls).map(([cidr]) => cidr)
  const inV6 = v4.flatMap((cidr) => {
    const [network, bits] = cidr.split("/") as [string, string]
    return embeddings.map(([, form]) => form(network, Number(bits)))
  })
  return [cls, blockList([...v4, ...inV6, ...ipv6Table.filter(([, c]) => c === cls).map(([cidr]) => cidr)])]
})

/** Public when the IPv4 address inside is (no class above held it). */
const embedding = blockList(embeddings.map(([block]) => block))

const globalUnicast = blockList(["2000::/3"])

/**
 * The 16 bytes of an IPv6 address `isIP` accepted: the URL standard serializes it as hex groups
 * (no dotted tail), with at most one `::`.
 */
const ipv6Bytes = (address: string): Uint8Array => {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1)
  const [head, tail] = canonical.split("::") as [string, string | undefined]
  const groups = (s: string | undefined) => (s === undefined || s === "" ? [] : s.split(":"))
  const explicit = [...groups(head), ...groups(tail)]
  const all = [...groups(head), ...Array<string>(8 - explicit.length).fill("0"), ...groups(tail)]
  return Uint8Array.from(all.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]))
}

/** An IPv4 or IPv6 literal (brackets and a zone id allowed); none for anything else. */
export const parse = (text: string): Option.Option<ParsedAddress> => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  const address = bare.includes(":") ? bare.replace(/%.*$/, "") : bare
  switch (isIP(address)) {
    case 4:
      return Option.some({ family: 4, address, bytes: Uint8Array.from(address.split(".").map(Number)) })
    case 6:
      return Option.some({ family: 6, address, bytes: ipv6Bytes(address) })
    default:
      return Option.none()
  }
}

/** The class of a parsed address. */
export const classifyParsed = ({ address, family }: ParsedAddress): AddressClass => {
  const type = family === 4 ? "ipv4" : "ipv6"
  const listed = classes.find(([, list]) => list.check(address, type))
  if (listed !== undefined) return listed[0]
  if (family === 4 || embedding.check(address, type) || globalUnicast.check(address, type)) return "public"
  return "reserved"
}

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
