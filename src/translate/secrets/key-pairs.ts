import type { Checked } from '../checks/allowlist.js';
import { parseKeyPair, type KeyPair } from './certificates.js';
import type { SecretData, Typed } from '../resources.js';

/**
 * Key pairs parsed by earlier builds, by their PEM texts. Parsing is the costly part of a Secret's checks
 * (OpenSSL decodes the certificate and its key: a third of a millisecond a pair), so a pair is parsed once
 * for all the builds that read it, however its Secret object comes and goes. Held by the caller, not by
 * this module. It keeps the pairs of the Secrets in the input (`retain`), read by this build or not: the
 * cluster mode's builds settle only the hosts a change touches, and a change that touches them all (the
 * controller ConfigMap) must not parse every certificate again.
 */
export class KeyPairCache {
  /** By certificate text, then key text. */
  private parsedPairs = new Map<string, Map<string, Checked<KeyPair>>>();
  /** The Secrets `retain` last kept the pairs of: while the same, nothing was let go since. */
  private retainedFor: ReadonlyMap<string, Typed<SecretData>> | undefined;

  /** `parseKeyPair(certPem, keyPem)`, parsed only when no build since the Secret came did. */
  parsed(certPem: string, keyPem: string): Checked<KeyPair> {
    const known = this.parsedPairs.get(certPem)?.get(keyPem);
    if (known) return known;
    const parsed = parseKeyPair(certPem, keyPem);
    addPair(this.parsedPairs, certPem, keyPem, parsed);
    return parsed;
  }

  /** A build of `secrets` begins: the pairs of Secrets no longer there (or no longer with these texts) are let go. */
  retain(secrets: ReadonlyMap<string, Typed<SecretData>>): void {
    if (secrets === this.retainedFor) return;
    this.retainedFor = secrets;
    const kept = new Map<string, Map<string, Checked<KeyPair>>>();
    for (const { spec } of secrets.values()) {
      const certPem = spec.data.get('tls.crt');
      const keyPem = spec.data.get('tls.key');
      if (certPem === undefined || keyPem === undefined) continue;
      const parsed = this.parsedPairs.get(certPem)?.get(keyPem);
      if (parsed) addPair(kept, certPem, keyPem, parsed);
    }
    this.parsedPairs = kept;
  }
}

function addPair(pairs: Map<string, Map<string, Checked<KeyPair>>>, certPem: string, keyPem: string, parsed: Checked<KeyPair>): void {
  let byKey = pairs.get(certPem);
  if (!byKey) pairs.set(certPem, (byKey = new Map()));
  byKey.set(keyPem, parsed);
}
