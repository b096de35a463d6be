/**
 * @module
 * IP address parsing and classification for the SSRF guard (src/services/ssrf.ts).
 *
 * Parsing follows the WHATWG URL host parser, so a host that `new URL()` left alone still gets
 * read the way a fetch would read it: IPv4 parts may be decimal, octal (`0177`) or hex (`0x7f`),
 * and the last part fills the remaining bytes (`127.1`, `2130706433`).
 * Classification follows the IANA special-purpose registries (RFC 6890 and successors): an
 * address is either public (`null`) or gets a reason naming why it must not be fetched.
 */

type Range4 = readonly [base: string, bits: number, reason: string]

/** IPv4 ranges that are never a public web server. Order only matters for the reason text. */
const BLOCKED_V4: readonly Range4[] = [
  ['0.0.0.0', 8, 'unspecified ("this network") address'],
  ['10.0.0.0', 8, 'private address'],
  ['100.64.0.0', 10, 'carrier-grade NAT address'],
  ['127.0.0.0', 8, 'loopback address'],
  ['169.254.0.0', 16, 'link-local address'],
  ['172.16.0.0', 12, 'private address'],
  ['192.0.0.0', 24, 'IETF protocol assignment'],
  ['192.0.2.0', 24, 'documentation address'],
  ['192.88.99.0', 24, '6to4 relay anycast address'],
  ['192.168.0.0', 16, 'private address'],
  ['198.18.0.0', 15, 'benchmarking address'],
  ['198.51.100.0', 24, 'documentation address'],
  ['203.0.113.0', 24, 'documentation address'],
  ['224.0.0.0', 4, 'multicast address'],
  ['240.0.0.0', 4, 'reserved address'], // includes 255.255.255.255 (broadcast)
]

const MAX_IPV4 = 0xffffffff

/** WHATWG "ends in a number": such a host must parse as IPv4 or is not a valid host at all. */
export function endsInNumber(host: string): boolean {
  const parts = host.split('.')
  if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop()
  const last = parts[parts.length - 1]
  return /^[0-9]+$/.test(last) || /^0[xX][0-9a-fA-F]*$/.test(last)
}

function parseIPv4Part(part: string): number | null {
  if (part === '') return null
  let radix = 10
  let digits = part
  if (/^0[xX]/.test(part)) {
    radix = 16
    digits = part.slice(2)
    if (digits === '') return 0 // WHATWG: "0x" alone is zero
  } else if (part.length > 1 && part.startsWith('0')) {
    radix = 8
    digits = part.slice(1)
  }
  const pattern = radix === 16 ? /^[0-9a-fA-F]+$/ : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/
  if (!pattern.test(digits)) return null
  const value = parseInt(digits, radix)
  return Number.isSafeInteger(value) ? value : null
}

/** Parses every IPv4 spelling a URL host may use; returns the address as an unsigned 32-bit int. */
export function parseIPv4(host: string): number | null {
  const parts = host.split('.')
  if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop()
  if (parts.length > 4) return null
  const numbers: number[] = []
  for (const part of parts) {
    const n = parseIPv4Part(part)
    if (n === null) return null
    numbers.push(n)
  }
  const last = numbers.pop() as number
  if (numbers.some((n) => n > 255)) return null
  if (last >= 256 ** (4 - numbers.length)) return null
  let value = last
  numbers.forEach((n, i) => {
    value += n * 256 ** (3 - i)
  })
  return value > MAX_IPV4 ? null : value
}

export function formatIPv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.')
}

/** Parses an IPv6 address (brackets optional, dotted IPv4 tail allowed) into 16 bytes. */
export function parseIPv6(input: string): Uint8Array | null {
  let host = input
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1)
  // A zone id (`fe80::1%eth0`) does not change which range the address is in.
  if (host.includes('%')) host = host.slice(0, host.indexOf('%'))
  if (!host.includes(':')) return null
  const halves = host.split('::')
  if (halves.length > 2) return null
  const words = (s: string): number[] | null => {
    if (s === '') return []
    const out: number[] = []
    const groups = s.split(':')
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i]
      if (i === groups.length - 1 && g.includes('.')) {
        if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(g)) return null
        const octets = g.split('.').map(Number)
        if (octets.some((o) => o > 255)) return null
        out.push((octets[0] << 8) | octets[1], (octets[2] << 8) | octets[3])
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null
        out.push(parseInt(g, 16))
      }
    }
    return out
  }
  const head = words(halves[0])
  const tail = halves.length === 2 ? words(halves[1]) : []
  if (!head || !tail) return null
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail]
  const bytes = new Uint8Array(16)
  all.forEach((w, i) => {
    bytes[i * 2] = w >> 8
    bytes[i * 2 + 1] = w & 255
  })
  return bytes
}

function inRange4(addr: number, base: string, bits: number): boolean {
  if (bits === 0) return true
  const mask = bits === 32 ? MAX_IPV4 : (MAX_IPV4 << (32 - bits)) >>> 0
  return (addr & mask) >>> 0 === ((parseIPv4(base) as number) & mask) >>> 0
}

/** `null` when the IPv4 address is public; otherwise why it is blocked. */
export function classifyIPv4(addr: number): string | null {
  for (const [base, bits, reason] of BLOCKED_V4) {
    if (inRange4(addr, base, bits)) return reason
  }
  return null
}

const v4At = (b: Uint8Array, i: number): number => ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0
const zero = (b: Uint8Array, from: number, to: number): boolean => b.subarray(from, to).every((x) => x === 0)
const word = (b: Uint8Array, i: number): number => (b[i * 2] << 8) | b[i * 2 + 1]

/** Reason from an IPv4 address embedded in an IPv6 one, prefixed with how it was embedded. */
function embedded(kind: string, v4: number): string | null {
  const reason = classifyIPv4(v4)
  return reason && `${kind} of ${reason} ${formatIPv4(v4)}`
}

/** `null` when the IPv6 address is public; otherwise why it is blocked. */
export function classifyIPv6(b: Uint8Array): string | null {
  const w0 = word(b, 0)
  const w1 = word(b, 1)
  if (zero(b, 0, 10)) {
    const w5 = word(b, 5)
    if (w5 === 0xffff) return embedded('IPv4-mapped form', v4At(b, 12))
    if (w5 === 0) {
      if (zero(b, 10, 15) && b[15] === 0) return 'unspecified address'
      if (zero(b, 10, 15) && b[15] === 1) return 'loopback address'
      // ::a.b.c.d (IPv4-compatible, RFC 4291 §2.5.5.1) is deprecated: nothing public uses it.
      return embedded('IPv4-compatible form', v4At(b, 12)) ?? 'IPv4-compatible address (deprecated)'
    }
  }
  if (w0 === 0x64 && w1 === 0xff9b) {
    if (zero(b, 4, 12)) return embedded('NAT64 form', v4At(b, 12)) // 64:ff9b::/96, RFC 6052
    if (word(b, 2) === 1) return 'local-use NAT64 address' // 64:ff9b:1::/48, RFC 8215
  }
  if (w0 === 0x2002) return embedded('6to4 form', v4At(b, 2)) // 2002:V4ADDR::/48, RFC 3056
  if (w0 === 0x2001 && w1 === 0) {
    // Teredo (RFC 4380): server v4 in bits 32-63, client v4 inverted in the last 32 bits. The
    // tunnel is obsolete, so it is refused either way; the reason names an embedded private v4.
    const client = ~v4At(b, 12) >>> 0
    const server = v4At(b, 4)
    return embedded('Teredo form', server) ?? embedded('Teredo form', client) ?? 'Teredo address'
  }
  if (w0 === 0x2001 && w1 === 0x0db8) return 'documentation address'
  if (w0 === 0x2001 && w1 < 0x200) return 'IETF protocol assignment' // 2001::/23
  if ((w0 & 0xfff0) === 0x3ff0) return 'documentation address' // 3fff::/20, RFC 9637
  if (w0 === 0x5f00) return 'SRv6 SID address' // 5f00::/16, RFC 9602
  if ((w0 & 0xfe00) === 0xfc00) return 'unique-local address'
  if ((w0 & 0xffc0) === 0xfe80) return 'link-local address'
  if ((w0 & 0xffc0) === 0xfec0) return 'site-local address (deprecated)'
  if ((w0 & 0xff00) === 0xff00) return 'multicast address'
  if (w0 === 0x0100 && zero(b, 2, 8)) return 'discard-only address' // 100::/64
  // Only 2000::/3 is allocated for global unicast; everything else is reserved by the IETF.
  if ((w0 & 0xe000) !== 0x2000) return 'reserved address'
  return null
}

/**
 * Classifies an IP literal in any spelling. Returns `{ ip, blocked }` where `blocked` is the
 * reason (or `null` for a public address), or `null` when `host` is not an IP literal.
 * @example
 * classifyIp('[::ffff:7f00:1]')
 * // { ip: '::ffff:7f00:1', blocked: 'IPv4-mapped form of loopback address 127.0.0.1' }
 */
export function classifyIp(host: string): { ip: string; blocked: string | null } | null {
  if (host.includes(':')) {
    const bytes = parseIPv6(host)
    if (!bytes) return null
    return { ip: host.replace(/^\[|\]$/g, ''), blocked: classifyIPv6(bytes) }
  }
  const v4 = parseIPv4(host)
  if (v4 === null) return null
  return { ip: formatIPv4(v4), blocked: classifyIPv4(v4) }
}
