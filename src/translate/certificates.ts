import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import type { Checked } from './allowlist.js';

/**
 * Certificate checks done before rendering, so that nginx never fails to start over a bad Secret and
 * the user learns which Secret is wrong. Pure: `now` is passed in.
 */

export interface KeyPair {
  /** The leaf certificate (first PEM block). */
  readonly leaf: X509Certificate;
  /** The whole chain as given, normalised to end with a newline. */
  readonly chainPem: string;
  readonly keyPem: string;
  readonly dnsNames: readonly string[];
}

/**
 * The PEM blocks with one of `labels`, in order: each from `-----BEGIN L-----` and a line break to the next
 * `-----END L-----`. One forward scan from one `-----` to the next, with at most one open block per label,
 * so that no text costs more than linear time (a lazy regular expression retried from every unfinished
 * BEGIN line is quadratic).
 */
function pemBlocks(text: string, labels: readonly string[]): string[] {
  const blocks: string[] = [];
  const openedAt = new Map<string, number>();
  for (let at = text.indexOf('-----'); at !== -1; at = text.indexOf('-----', at + 1)) {
    for (const label of labels) {
      const begin = `-----BEGIN ${label}-----`;
      const end = `-----END ${label}-----`;
      const start = openedAt.get(label);
      if (start === undefined && text.startsWith(begin, at)) {
        const lineBreak = at + begin.length + (text.charCodeAt(at + begin.length) === 0x0d ? 1 : 0);
        if (text.charCodeAt(lineBreak) !== 0x0a) continue;
        openedAt.set(label, at);
        at = lineBreak;
        break;
      }
      if (start !== undefined && text.startsWith(end, at)) {
        blocks.push(text.slice(start, at + end.length));
        openedAt.delete(label);
        at += end.length - 1;
        break;
      }
    }
  }
  return blocks;
}

/** Parses `tls.crt`/`tls.key` (server or client pair): PEM parses, and the key belongs to the leaf. */
export function parseKeyPair(certPem: string, keyPem: string): Checked<KeyPair> {
  const certificates = pemBlocks(certPem, ['CERTIFICATE']);
  if (certificates.length === 0) return { ok: false, problem: 'tls.crt holds no PEM certificate' };
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(certificates[0]!);
    for (const extra of certificates.slice(1)) new X509Certificate(extra);
  } catch (error) {
    return { ok: false, problem: `tls.crt does not parse as X.509 (${firstLine(error)})` };
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (error) {
    return { ok: false, problem: `tls.key does not parse as a PEM private key (${firstLine(error)})` };
  }
  if (!leaf.checkPrivateKey(key)) {
    return { ok: false, problem: 'tls.key does not match the certificate in tls.crt' };
  }
  return {
    ok: true,
    value: {
      leaf,
      chainPem: certificates.join('\n') + '\n',
      keyPem: keyPem.endsWith('\n') ? keyPem : keyPem + '\n',
      dnsNames: subjectDnsNames(leaf),
    },
  };
}


/** Parses a CA bundle: at least one certificate, all of them valid X.509. */
export function parseCaBundle(pem: string): Checked<{ readonly pem: string }> {
  const certificates = pemBlocks(pem, ['CERTIFICATE', 'TRUSTED CERTIFICATE']);
  if (certificates.length === 0) return { ok: false, problem: 'ca.crt holds no PEM certificate' };
  try {
    for (const certificate of certificates) new X509Certificate(certificate);
  } catch (error) {
    return { ok: false, problem: `ca.crt does not parse as X.509 (${firstLine(error)})` };
  }
  return { ok: true, value: { pem: certificates.join('\n') + '\n' } };
}

/** DNS names a certificate is valid for: SAN DNS entries, else (legacy) the subject CN. */
function subjectDnsNames(certificate: X509Certificate): string[] {
  const san = certificate.subjectAltName;
  if (san) {
    return san
      .split(/,\s*/)
      .filter((entry) => entry.startsWith('DNS:'))
      .map((entry) => entry.slice(4).toLowerCase());
  }
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(certificate.subject)?.[1];
  return cn ? [cn.toLowerCase()] : [];
}

/**
 * True when one of the certificate's names covers `host`: exact, or a `*.` wildcard standing for exactly
 * one label (RFC 6125). A wildcard host is covered only by the same wildcard.
 */
export function certificateCoversHost(dnsNames: readonly string[], host: string): boolean {
  const wanted = host.toLowerCase();
  return dnsNames.some((name) => {
    if (name === wanted) return true;
    if (!name.startsWith('*.') || wanted.startsWith('*.')) return false;
    const dot = wanted.indexOf('.');
    return dot > 0 && wanted.slice(dot + 1) === name.slice(2);
  });
}

export type Validity = 'valid' | 'expired' | 'not-yet-valid';

export function validityAt(certificate: X509Certificate, now: Date): Validity {
  if (now.getTime() > Date.parse(certificate.validTo)) return 'expired';
  if (now.getTime() < Date.parse(certificate.validFrom)) return 'not-yet-valid';
  return 'valid';
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
