import { addressBytes } from '../translate/checks/addresses.js';
import { cidrList } from '../translate/checks/allowlist.js';
import { annotationPrefix } from '../translate/ingress/annotations/index.js';

/**
 * How an Ingress's access control got looser between two versions of its annotations: an allow-list
 * that admits addresses it did not, a deny-list that stops denying some, client-certificate
 * verification relaxed or its CA swapped, `satisfy any`, or the auth service or its Secret swapped.
 * Removing an annotation is another rule's (`access-control-removed`); this one compares values.
 */

export interface Widening {
  /** The annotation, without the prefix. */
  readonly annotation: string;
  readonly message: string;
}

type Annotations = Readonly<Record<string, string>>;

const shown = (value: string) => JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);

export function accessWidenings(before: Annotations, after: Annotations): Widening[] {
  const get = (annotations: Annotations, name: string) => annotations[`${annotationPrefix}${name}`]?.trim();
  const changes: Widening[] = [];
  const both = (name: string): [string, string] | undefined => {
    const [was, now] = [get(before, name), get(after, name)];
    return was !== undefined && now !== undefined ? [was, now] : undefined;
  };

  for (const name of ['whitelist-source-range', 'allowlist-source-range']) {
    const pair = both(name);
    const admitted = pair && uncovered(pair[1], pair[0]);
    if (admitted && admitted.length > 0) {
      changes.push({ annotation: name, message: `${name} admits ${admitted.join(', ')} now, which it did not (was ${shown(pair[0])}, now ${shown(pair[1])})` });
    }
  }
  const denied = both('denylist-source-range');
  const released = denied && uncovered(denied[0], denied[1]);
  if (released && released.length > 0) {
    changes.push({ annotation: 'denylist-source-range', message: `denylist-source-range no longer denies ${released.join(', ')} (was ${shown(denied![0])}, now ${shown(denied![1])})` });
  }

  // Client certificates: only where both sides verify them (auth-tls-secret); a missing verify-client means "on".
  if (get(before, 'auth-tls-secret') !== undefined && get(after, 'auth-tls-secret') !== undefined) {
    const strength = (annotations: Annotations) => verifyStrength.indexOf((get(annotations, 'auth-tls-verify-client') ?? 'on').toLowerCase());
    const [was, now] = [strength(before), strength(after)];
    if (now < was) {
      changes.push({
        annotation: 'auth-tls-verify-client',
        message: `auth-tls-verify-client is relaxed from ${shown(verifyStrength[was] ?? '?')} to ${shown(get(after, 'auth-tls-verify-client') ?? '')}: clients ${now <= verifyStrength.indexOf('optional_no_ca') ? 'with a certificate no CA vouches for, or none,' : 'without a certificate'} get through`,
      });
    }
    const depth = (annotations: Annotations) => Number(get(annotations, 'auth-tls-verify-depth') ?? '1');
    if (depth(after) > depth(before)) {
      changes.push({ annotation: 'auth-tls-verify-depth', message: `auth-tls-verify-depth accepts longer client certificate chains now (${depth(before)} → ${depth(after)})` });
    }
  }

  const satisfy = (annotations: Annotations) => (get(annotations, 'satisfy') ?? 'all').toLowerCase();
  if (satisfy(before) !== 'any' && satisfy(after) === 'any') {
    changes.push({ annotation: 'satisfy', message: 'satisfy is "any" now: passing one of the address check and authentication is enough, where both were needed' });
  }

  for (const [name, what] of swappable) {
    const pair = both(name);
    if (pair && pair[0] !== pair[1]) changes.push({ annotation: name, message: `${name} changed: ${what} (was ${shown(pair[0])}, now ${shown(pair[1])})` });
  }
  return changes;
}

/** `auth-tls-verify-client` from the loosest to the strictest. */
const verifyStrength = ['off', 'optional_no_ca', 'optional', 'on'];

/** Annotations whose value names who decides: a different one decides differently. */
const swappable: readonly (readonly [string, string])[] = [
  ['auth-url', 'another service decides who gets in'],
  ['auth-secret', 'another set of users gets in'],
  ['auth-tls-secret', 'client certificates are verified against another CA'],
  ['auth-tls-match-cn', 'another client certificate subject gets in'],
  ['auth-type', 'another kind of authentication is asked for'],
];

/**
 * The networks of `list` that `reference` does not cover (each network as written, normalised), for two
 * lists as `cidrList` reads them; undefined when either does not parse (the Ingress has an error then).
 */
function uncovered(list: string, reference: string): string[] | undefined {
  const [networks, covering] = [cidrList.safeParse(list), cidrList.safeParse(reference)];
  if (!networks.success || !covering.success) return undefined;
  const ranges = merged(covering.data.map(range));
  return networks.data.filter((network) => {
    const wanted = range(network);
    return !ranges.some((r) => r.family === wanted.family && r.first <= wanted.first && wanted.last <= r.last);
  });
}

/** The union of `ranges` as few ranges as can be: overlapping and adjacent ones joined (10.0.0.0/9 + 10.128.0.0/9 = 10.0.0.0/8). */
function merged(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a.family - b.family || (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const union: Range[] = [];
  for (const next of sorted) {
    const last = union[union.length - 1];
    if (last && last.family === next.family && next.first <= last.last + 1n) {
      union[union.length - 1] = { ...last, last: next.last > last.last ? next.last : last.last };
    } else {
      union.push(next);
    }
  }
  return union;
}

interface Range {
  readonly family: 4 | 6;
  readonly first: bigint;
  readonly last: bigint;
}

/** `10.0.0.0/8` or `2001:db8::/32` (as `cidrList` normalises them) as the first and last address. */
function range(network: string): Range {
  const [address = '', prefixText] = network.split('/');
  const bytes = addressBytes(address) ?? [];
  const family = bytes.length === 16 ? 6 : 4;
  const prefix = BigInt(prefixText ?? bytes.length * 8);
  const value = bytes.reduce((n, byte) => (n << 8n) + BigInt(byte), 0n);
  const hostBits = BigInt(bytes.length * 8) - prefix;
  const first = (value >> hostBits) << hostBits;
  return { family, first, last: first + (1n << hostBits) - 1n };
}
