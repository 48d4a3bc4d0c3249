import type { Checked } from './allowlist.js';
import { parseKeyPair, type KeyPair } from './certificates.js';

/**
 * Key pairs parsed by earlier builds, by their PEM texts. Parsing is the costly part of a Secret's checks
 * (OpenSSL decodes the certificate and its key: a third of a millisecond a pair), so a pair is parsed once
 * for all the builds that read it, however its Secret object comes and goes. Held by the caller, not by
 * this module: each build keeps the pairs it reads and lets go of the rest (`beginBuild`), so the cache
 * the cluster mode keeps holds one build's worth.
 */
export class KeyPairCache {
  /** By certificate text, then key text. */
  private current = new Map<string, Map<string, Checked<KeyPair>>>();
  private earlier = new Map<string, Map<string, Checked<KeyPair>>>();

  private add(certPem: string, keyPem: string, parsed: Checked<KeyPair>): void {
    let byKey = this.current.get(certPem);
    if (!byKey) this.current.set(certPem, (byKey = new Map()));
    byKey.set(keyPem, parsed);
  }

  /** `parseKeyPair(certPem, keyPem)`, parsed only when neither this build nor the one before did. */
  parsed(certPem: string, keyPem: string): Checked<KeyPair> {
    const known = this.current.get(certPem)?.get(keyPem) ?? this.earlier.get(certPem)?.get(keyPem);
    const parsed = known ?? parseKeyPair(certPem, keyPem);
    this.add(certPem, keyPem, parsed);
    return parsed;
  }

  /** A build begins: the pairs the build before did not read are let go; those it read wait for this one. */
  beginBuild(): void {
    this.earlier = this.current;
    this.current = new Map();
  }
}
