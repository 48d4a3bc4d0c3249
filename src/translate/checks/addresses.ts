/**
 * One answer, for auth-url, ExternalName and EndpointSlices alike, to "may a tenant have nginx connect
 * here?". Never to the node itself (loopback), to link-local addresses or to the cloud metadata
 * services, which hand out the node's credentials to whoever asks (AWS, GCP, Azure, Oracle and
 * DigitalOcean at 169.254.169.254, AWS also at fd00:ec2::254, GCP at fd20:ce::254, Alibaba at
 * 100.100.100.200, Azure's platform at 168.63.129.16, Oracle's legacy one at 192.0.0.192), to the
 * unspecified address (which reaches the node) or to multicast and reserved ranges. An address is
 * judged in every spelling that reaches the same place: IPv4 as the C library reads it (decimal
 * `2130706433`, hex `0x7f000001`, octal `0177.0.0.1`, short `127.1`), and IPv4 inside IPv6 (mapped
 * `::ffff:127.0.0.1`, compatible `::127.0.0.1`, translated, NAT64 `64:ff9b::7f00:1`, 6to4, Teredo).
 */
import { isIP } from 'node:net';

export interface SpecialAddress {
  /** The IPv4 or IPv6 address it reaches, in its usual spelling. */
  readonly address: string;
  /** What it is, for messages: "the loopback", "a cloud metadata service", … */
  readonly what: string;
}

type Range = readonly [prefix: readonly number[], bits: number, what: string];

const loopback = 'the node itself (loopback)';
const metadata = 'a cloud metadata service';
const linkLocal = 'a link-local address (where cloud metadata services answer)';
const unspecified = 'the unspecified address (the node itself)';
const multicast = 'a multicast address';
const reserved = 'a reserved address';

const ipv4Ranges: readonly Range[] = [
  [[127], 8, loopback],
  [[0], 8, unspecified],
  [[169, 254], 16, linkLocal],
  [[100, 100, 100, 200], 32, metadata],
  [[168, 63, 129, 16], 32, metadata],
  [[192, 0, 0, 192], 32, metadata],
  [[224], 4, multicast],
  [[240], 4, reserved],
];

const ipv6Ranges: readonly Range[] = [
  [[], 128, unspecified],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, loopback],
  [[0xfe, 0x80], 10, linkLocal],
  [[0xff], 8, multicast],
  [[0xfd, 0x00, 0x0e, 0xc2], 32, metadata],
  [[0xfd, 0x20, 0x00, 0xce], 32, metadata],
  // RFC 8215's local-use NAT64 prefix: where the IPv4 address sits depends on the operator's setup.
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, 'a local-use NAT64 address (it can stand for any IPv4 address)'],
];

/** Where IPv6 carries an IPv4 address: the prefix, its length, and the offset of the four bytes. */
const embeddings: readonly (readonly [prefix: readonly number[], bits: number, offset: number, xor: number])[] = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96, 12, 0], // IPv4-mapped
  [[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0], 96, 12, 0], // IPv4-translated (RFC 2765)
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 96, 12, 0], // IPv4-compatible
  [[0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96, 12, 0], // NAT64 well-known prefix
  [[0x20, 0x02], 16, 2, 0], // 6to4
  [[0x20, 0x01, 0x00, 0x00], 32, 4, 0], // Teredo server
  [[0x20, 0x01, 0x00, 0x00], 32, 12, 0xff], // Teredo client, obfuscated
];

/** The address's bytes, when `text` is an IPv4 address in any spelling inet_aton reads, or an IPv6 address. */
export function addressBytes(text: string): number[] | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (bare.includes(':')) return isIP(bare) === 6 ? ipv6Bytes(bare) : undefined;
  return ipv4Bytes(bare);
}

/** inet_aton: one to four parts, each decimal, 0x hex or 0-led octal; the last fills the bytes left. */
function ipv4Bytes(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length > 4 || parts.some((part) => part === '')) return undefined;
  const values: number[] = [];
  for (const part of parts) {
    const match = /^(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$/i.exec(part);
    if (!match) return undefined;
    const value = /^0x/i.test(part) ? (part.length === 2 ? 0 : parseInt(part.slice(2), 16)) : part.startsWith('0') ? parseInt(part, 8) : Number(part);
    if (!Number.isSafeInteger(value)) return undefined;
    values.push(value);
  }
  const last = values.pop()!;
  if (values.some((v) => v > 255) || last >= 256 ** (4 - values.length)) return undefined;
  const tail = [];
  for (let i = 4 - values.length - 1, rest = last; i >= 0; i--) {
    tail.unshift(rest % 256);
    rest = Math.floor(rest / 256);
  }
  return [...values, ...tail];
}

function ipv6Bytes(text: string): number[] | undefined {
  let head = text;
  let v4: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    v4 = dotted[2]!.split('.').map(Number);
    head = `${dotted[1]}0:0`;
  }
  const [left = '', right] = head.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  const words = right === undefined ? l : [...l, ...new Array<number>(8 - l.length - r.length).fill(0), ...r];
  if (words.length !== 8 || words.some((w) => !(w >= 0 && w <= 0xffff))) return undefined;
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (dotted) bytes.splice(12, 4, ...v4);
  return bytes;
}

function inRange(bytes: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((bytes[byte] ?? 0) & mask) !== ((prefix[byte] ?? 0) & mask)) return false;
  }
  return true;
}

/**
 * What a tenant must not send nginx to, when `text` spells an address (in any spelling); undefined for
 * an address that may be used, and for text that is no address.
 */
export function specialAddress(text: string): SpecialAddress | undefined {
  const bytes = addressBytes(text);
  if (!bytes) return undefined;
  if (bytes.length === 4) return classifyIpv4(bytes);
  const own = ipv6Ranges.find(([prefix, bits]) => inRange(bytes, prefix, bits));
  const address = formatIpv6(bytes);
  if (own) return { address, what: own[2] };
  for (const [prefix, bits, offset, xor] of embeddings) {
    if (!inRange(bytes, prefix, bits)) continue;
    const embedded = classifyIpv4(bytes.slice(offset, offset + 4).map((b) => b ^ xor));
    if (embedded) return { address, what: `${embedded.what}, as ${embedded.address} inside IPv6` };
  }
  return undefined;
}

function classifyIpv4(bytes: readonly number[]): SpecialAddress | undefined {
  const range = ipv4Ranges.find(([prefix, bits]) => inRange(bytes, prefix, bits));
  return range ? { address: bytes.join('.'), what: range[2] } : undefined;
}

function formatIpv6(bytes: readonly number[]): string {
  const words = [];
  for (let i = 0; i < 16; i += 2) words.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return words.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/**
 * Host names that reach what `specialAddress` refuses whatever DNS says: the node's own names, the
 * metadata services' names, and the wildcard-DNS spellings of a special address (`127.0.0.1.nip.io`,
 * `169-254-169-254.sslip.io`).
 */
const specialNames: ReadonlyMap<string, string> = new Map([
  ['localhost', loopback],
  ['localhost.localdomain', loopback],
  ['ip6-localhost', loopback],
  ['ip6-loopback', loopback],
  ['metadata', metadata],
  ['metadata.google.internal', metadata],
  ['metadata.goog', metadata],
  ['metadata.azure.com', metadata],
  ['metadata.tencentyun.com', metadata],
  ['instance-data', metadata],
  ['instance-data.ec2.internal', metadata],
]);

/**
 * Why a host name must not be a tenant's target, or undefined. A name whose last label is a number
 * is an address in disguise (the C library reads `2130706433` and `0x7f.1` as addresses); any address
 * spelled as a name is refused, special or not, since a tenant must not point nginx at an address.
 */
export function specialHostName(raw: string): string | undefined {
  const name = raw.toLowerCase().replace(/\.$/, '');
  const labels = name.split('.');
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(labels[labels.length - 1] ?? '')) return 'is an IP address, not a host name';
  const known = specialNames.get(name) ?? (name.endsWith('.localhost') ? loopback : undefined);
  if (known) return `names ${known}`;
  for (let i = 0; i + 4 <= labels.length; i++) {
    const embedded = specialAddress(labels.slice(i, i + 4).join('.'));
    if (embedded && labels.slice(i, i + 4).every((label) => /^\d{1,3}$/.test(label))) return `spells ${embedded.address}, ${embedded.what}`;
  }
  for (const label of labels) {
    const dashed = /^(?:.*-)?(\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3})$/.exec(label)?.[1];
    const embedded = dashed === undefined ? undefined : specialAddress(dashed.replaceAll('-', '.'));
    if (embedded) return `spells ${embedded.address}, ${embedded.what}`;
  }
  return undefined;
}
