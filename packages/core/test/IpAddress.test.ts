import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { IpAddress } from "../src/index.js"

const cases: ReadonlyArray<readonly [string, IpAddress.AddressClass]> = [
  // IPv4
  ["0.0.0.0", "unspecified"],
  ["0.255.255.255", "unspecified"],
  ["1.1.1.1", "public"],
  ["8.8.8.8", "public"],
  ["9.255.255.255", "public"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["11.0.0.0", "public"],
  ["100.63.255.255", "public"],
  ["100.64.0.0", "cgnat"],
  ["100.127.255.255", "cgnat"],
  ["100.128.0.0", "public"],
  ["126.255.255.255", "public"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.169.254", "link_local"],
  ["169.253.255.255", "public"],
  ["169.255.0.0", "public"],
  ["172.15.255.255", "public"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["172.32.0.0", "public"],
  ["192.0.0.8", "reserved"],
  ["192.0.2.1", "reserved"],
  ["192.88.99.1", "reserved"],
  ["192.167.255.255", "public"],
  ["192.168.1.1", "private"],
  ["192.169.0.0", "public"],
  ["198.18.0.1", "reserved"],
  ["198.19.255.255", "reserved"],
  ["198.20.0.0", "public"],
  ["198.51.100.7", "reserved"],
  ["203.0.113.9", "reserved"],
  ["223.255.255.255", "public"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.255", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "reserved"],
  // IPv6
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["[::1]", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["::2", "reserved"],
  ["::127.0.0.1", "reserved"],
  ["::ffff:127.0.0.1", "loopback"],
  ["[::ffff:127.0.0.1]", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::FFFF:7F00:0001", "loopback"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:169.254.169.254", "link_local"],
  ["::ffff:100.64.1.1", "cgnat"],
  ["::ffff:8.8.8.8", "public"],
  ["0:0:0:0:0:ffff:192.168.0.1", "private"],
  ["64:ff9b::127.0.0.1", "loopback"],
  ["64:ff9b::8.8.8.8", "public"],
  ["64:ff9b:1::1", "reserved"],
  ["100::1", "reserved"],
  ["2001::1", "reserved"],
  ["2001:db8::1", "reserved"],
  ["2002:7f00:1::", "loopback"],
  ["2002:0808:0808::1", "public"],
  ["2606:4700:4700::1111", "public"],
  ["2a00:1450:4001:82a::200e", "public"],
  ["3fff::1", "reserved"],
  ["5f00::1", "reserved"],
  ["fc00::1", "private"],
  ["fd12:3456:789a::1", "private"],
  ["fe80::1", "link_local"],
  ["fe80::1%eth0", "link_local"],
  ["febf:ffff::1", "link_local"],
  ["fec0::1", "private"],
  ["ff02::1", "multicast"],
  ["1000::1", "reserved"],
  ["4000::1", "reserved"]
]

describe("IpAddress.classify", () => {
  it.each(cases)("%s is %s", (address, expected) => {
    expect(IpAddress.classify(address)).toEqual(Option.some(expected))
    expect(IpAddress.isPublic(address)).toBe(expected === "public")
  })

  it.each([
    "localhost",
    "example.com",
    "",
    "1.2.3",
    "1.2.3.4.5",
    "256.1.1.1",
    "01.2.3.4",
    "0x7f.0.0.1",
    "2130706433",
    "1::2::3",
    "12345::1",
    "::ffff:1.2.3.256",
    "1:2:3:4:5:6:7:8:9",
    "g::1",
    ":::"
  ])("%j is not an IP literal (resolved as a name, never public by itself)", (text) => {
    expect(IpAddress.classify(text)).toEqual(Option.none())
    expect(IpAddress.isPublic(text)).toBe(false)
  })

  it("parses IPv6 forms to the same bytes", () => {
    const bytes = (t: string) => Array.from(Option.getOrThrow(IpAddress.parse(t)).bytes)
    expect(bytes("::ffff:127.0.0.1")).toEqual(bytes("::ffff:7f00:1"))
    expect(bytes("1:2:3:4:5:6:1.2.3.4")).toEqual(bytes("1:2:3:4:5:6:102:304"))
    expect(bytes("::")).toEqual(Array(16).fill(0))
    expect(bytes("1::")).toEqual([0, 1, ...Array(14).fill(0)])
    expect(Option.getOrThrow(IpAddress.parse("10.1.2.3")).family).toBe(4)
  })
})
