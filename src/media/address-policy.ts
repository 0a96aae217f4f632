/**
 * Which IP addresses a caller-supplied media URL may reach (the SSRF rule).
 *
 * Only globally routable unicast addresses are "public". Everything else (loopback, private,
 * link-local, CGNAT, multicast, reserved, benchmarking, documentation, ...) is refused, and the
 * IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are judged by
 * the IPv4 address they carry. Parsing is done here, by hand, so the rule is exact and testable.
 */
import { isIPv6 } from 'node:net';

/** Why an address is (not) allowed; `public` is the only allowed class. */
export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'benchmarking'
  | 'documentation'
  | 'invalid';

/** An IP literal found in a URL host. `address` is dotted-quad for IPv4, unbracketed for IPv6. */
export interface HostLiteral {
  family: 4 | 6;
  address: string;
}

type Range4 = readonly [base: string, bits: number, cls: AddressClass];
type Range6 = readonly [base: string, bits: number, cls: AddressClass];

/** IPv4 ranges that are not public (IANA special-purpose registry, RFC 6890 and successors). */
const V4_RANGES: readonly Range4[] = [
  ['0.0.0.0', 8, 'unspecified'], // "this network"
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'], // CGNAT, RFC 6598
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'documentation'], // TEST-NET-1
  ['192.88.99.0', 24, 'reserved'], // deprecated 6to4 relay anycast, RFC 7526
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'], // TEST-NET-2
  ['203.0.113.0', 24, 'documentation'], // TEST-NET-3
  ['224.0.0.0', 4, 'multicast'],
  ['255.255.255.255', 32, 'broadcast'], // must precede 240/4
  ['240.0.0.0', 4, 'reserved'],
];

/**
 * Native IPv6 ranges that are not public. The IPv4-carrying forms are handled separately, and
 * anything outside 2000::/3 (the only block allocated for global unicast) is `reserved`.
 */
const V6_RANGES: readonly Range6[] = [
  ['64:ff9b:1::', 48, 'reserved'], // local-use NAT64, RFC 8215
  ['100::', 64, 'reserved'], // discard-only, RFC 6666
  ['2001::', 32, 'reserved'], // Teredo: the embedded client address is obfuscated, refuse outright
  ['2001:2::', 48, 'benchmarking'],
  ['2001:10::', 28, 'reserved'], // ORCHID (deprecated)
  ['2001:20::', 28, 'reserved'], // ORCHIDv2, not routable
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'], // RFC 9637
  ['fc00::', 7, 'private'], // unique local
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // deprecated site-local
  ['ff00::', 8, 'multicast'],
];

/** Parses strict dotted-quad IPv4 ("1.2.3.4", decimal, no leading zeros) to a uint32, or null. */
function parseDottedQuad(s: string): number | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

/** Parses an IPv6 literal (optionally with a `%zone`, no brackets) to eight 16-bit groups, or null. */
function parseIPv6(input: string): number[] | null {
  const zone = input.indexOf('%');
  let s = (zone >= 0 ? input.slice(0, zone) : input).toLowerCase();
  if (!isIPv6(s)) return null;
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseDottedQuad(tail);
    if (v4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const toGroups = (h: string | undefined): number[] => (h === undefined || h === '' ? [] : h.split(':').map((g) => Number.parseInt(g, 16)));
  const head = toGroups(halves[0]);
  const rest = toGroups(halves[1]);
  const groups = halves.length === 2 ? [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest] : head;
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return null;
  return groups;
}

/** True when the first `bits` bits of `a` and `b` (both 8 groups) are equal. */
function samePrefix6(a: readonly number[], b: readonly number[], bits: number): boolean {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if (((a[i] ?? 0) & mask) !== ((b[i] ?? 0) & mask)) return false;
  }
  return true;
}

const V4_TABLE = V4_RANGES.map(([base, bits, cls]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { net: ((parseDottedQuad(base) ?? 0) & mask) >>> 0, mask, cls };
});
const V6_TABLE = V6_RANGES.map(([base, bits, cls]) => ({ groups: parseIPv6(base) ?? [], bits, cls }));

function classifyIPv4(n: number): AddressClass {
  for (const r of V4_TABLE) if ((n & r.mask) >>> 0 === r.net) return r.cls;
  return 'public';
}

function classifyIPv6(g: readonly number[]): AddressClass {
  const at = (i: number): number => g[i] ?? 0;
  const v4At = (i: number): number => ((at(i) << 16) | at(i + 1)) >>> 0;
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (g.every((x) => x === 0)) return 'unspecified';
  if (zeroUpTo(7) && at(7) === 1) return 'loopback';
  if (zeroUpTo(5) && at(5) === 0xffff) return classifyIPv4(v4At(6)); // IPv4-mapped ::ffff:0:0/96
  if (zeroUpTo(6)) return classifyIPv4(v4At(6)); // IPv4-compatible ::/96 (deprecated)
  if (at(0) === 0x64 && at(1) === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    return classifyIPv4(v4At(6)); // NAT64 well-known prefix 64:ff9b::/96
  }
  if (at(0) === 0x2002) return classifyIPv4(v4At(1)); // 6to4 2002::/16
  for (const r of V6_TABLE) if (samePrefix6(g, r.groups, r.bits)) return r.cls;
  if ((at(0) & 0xe000) !== 0x2000) return 'reserved'; // outside 2000::/3 global unicast
  return 'public';
}

/**
 * Classifies an IP address literal as returned by `dns.lookup` (dotted-quad IPv4, or IPv6 with an
 * optional `%zone`). Anything that is not a valid literal is `invalid`.
 */
export function classifyAddress(ip: string): AddressClass {
  const v4 = parseDottedQuad(ip);
  if (v4 !== null) return classifyIPv4(v4);
  const v6 = parseIPv6(ip);
  if (v6 !== null) return classifyIPv6(v6);
  return 'invalid';
}

/**
 * True only for a globally routable unicast address. False for unspecified, loopback, private,
 * link-local, CGNAT, multicast, broadcast, reserved, benchmarking and documentation ranges, and
 * for IPv4-mapped / IPv4-compatible / NAT64 / 6to4 IPv6 forms whose embedded IPv4 is not public.
 * Invalid input is not public.
 */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === 'public';
}

/**
 * Recognises an IP literal in a URL host: bracketed (or bare) IPv6, and every IPv4 spelling the
 * WHATWG URL parser normalises (`2130706433`, `0x7f.1`, `127.1`, octal parts, a trailing dot,
 * full-width digits, percent-encoding), by letting the URL parser itself normalise it. Returns
 * null for a domain name (or an unusable host).
 */
export function parseHostLiteral(host: string): HostLiteral | null {
  if (host.startsWith('[') || host.includes(':')) {
    const inner = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    const zone = inner.indexOf('%');
    const bare = (zone >= 0 ? inner.slice(0, zone) : inner).toLowerCase();
    return parseIPv6(bare) === null ? null : { family: 6, address: bare };
  }
  if (/[/?#@\\\s]/.test(host)) return null; // not a bare host
  let hostname: string;
  try {
    hostname = new URL(`http://${host}/`).hostname;
  } catch {
    return null; // e.g. 4294967296, 08: the URL parser refuses them
  }
  return parseDottedQuad(hostname) === null ? null : { family: 4, address: hostname };
}
