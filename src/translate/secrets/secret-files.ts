/**
 * Key material: Secrets and ConfigMaps checked before anything names them (PEM parses, key matches,
 * certificate covers the host and is valid at `now`), and the files written from them (mode 0600). The
 * folder holds the certificate and private-key readers and the cache of parsed key pairs; it imports only
 * checks/ and the shared ground of translate/.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { OutputFile, TlsFiles } from '../../model/files.js';
import { compareStrings } from '../../model/order.js';
import type { Checked } from '../checks/allowlist.js';
import {
  certificateCoversHost,
  certificateFacts,
  parseCaBundle,
  parseCrl,
  validityAt,
  type CertificateFacts,
  type KeyPair,
  type Validity,
  type ValidityPeriod,
} from './certificates.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { SecretOrigins } from '../cluster-provided.js';
import { bundledDefaultCertificate, bundledDefaultKey } from './default-certificate.js';
import { key, type Resources, type SecretData, type Typed } from '../resources.js';
import type { ResourceChanges } from '../memo/resource-changes.js';
import type { KeyPairCache } from './key-pairs.js';

/** A namespaced object: a Secret, or the ConfigMap of a BackendTLSPolicy CA. */
export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
}

/** A Secret or ConfigMap that the build read, so the cluster mode watches it. */
export interface Reference extends ObjectRef {
  readonly kind: 'Secret' | 'ConfigMap';
  /** Named by the operator (the controller ConfigMap's `add-headers`, `proxy-set-headers`): followed in any namespace. */
  readonly operator?: true;
}

const keyMaterialMode = 0o600;

/** `user:hash`, optionally `:comment`, as nginx's `auth_basic_user_file` reads a line. */
const htpasswdLine = /^[!-"$-9;-~][!-9;-~]{0,254}:[!-~]{1,1024}$/;

/** File names must stay under the 255 bytes most file systems allow; leave room for our suffixes. */
const maxStemLength = 200;

/**
 * `<namespace>_<name>` (names cannot contain `_`, so it is unambiguous). A Kubernetes name may be 253
 * characters, which with its namespace would not fit a file name: such a stem is cut and made unique
 * again with a digest of the whole.
 */
export function fileStem(prefix: string, ref: ObjectRef): string {
  const stem = `${prefix}${ref.namespace}_${ref.name}`;
  if (stem.length <= maxStemLength) return stem;
  const digest = createHash('sha256').update(stem).digest('hex').slice(0, 16);
  return `${stem.slice(0, maxStemLength - digest.length - 1)}-${digest}`;
}

/** What a served certificate is, for reports and the expiry metric; never key material. */
export interface CertificateSummary {
  readonly subject: string;
  readonly issuer: string;
  readonly dnsNames: readonly string[];
  /** RFC 3339. */
  readonly notAfter: string;
  /** Decimal. */
  readonly serialNumber: string;
  /** The `serialNumber` attribute of the issuer's name, when it has one (ingress-nginx's metrics name certificates by it). */
  readonly issuerSerialNumber?: string;
  /** The Secret it was read from; none for the bundled default certificate. */
  readonly secret?: { readonly namespace: string; readonly name: string };
}

/**
 * What one claim's checks did to a SecretFiles: the files they offered, the Secrets and ConfigMaps they
 * read (with the object each was, for the memo to compare) and the validity they found at `now`. Played
 * back into another build's SecretFiles, it stands for running the checks again (ingress/claim-memo.ts).
 */
export interface SecretEffects {
  readonly files: readonly OutputFile[];
  readonly summaries: readonly (readonly [string, CertificateSummary])[];
  readonly references: readonly Reference[];
  /** Each object read, by kind and `namespace/name`, as it was (undefined: absent). */
  readonly objects: readonly (readonly ['Secret' | 'ConfigMap', string, object | undefined])[];
  readonly validities: readonly (readonly [ValidityPeriod, Validity])[];
}

type EffectLog = { -readonly [Key in keyof SecretEffects]: SecretEffects[Key][number][] };

/**
 * Turns Secrets into files beside nginx.conf. Each Secret is parsed at most once, however many hosts use
 * it, and a file is emitted only for Secrets that something actually uses.
 */
export class SecretFiles {
  private readonly keyPairs = new Map<string, Checked<KeyPair>>();
  private readonly summaries = new Map<string, CertificateSummary>();
  private readonly caBundles = new Map<string, Checked<{ readonly pem: string }>>();
  private readonly output = new Map<string, OutputFile>();
  /** Secrets and ConfigMaps read for what they hold besides a served certificate, by `kind/namespace/name`. */
  private readonly read = new Map<string, Reference>();
  /** Contents of the default certificate's file: what a stand-in holds (`standInCertificate`). */
  private standInContents = bundledDefaultCertificate + bundledDefaultKey;
  /** While `recording`: the effects of the checks run. */
  private log: EffectLog | undefined;

  /** `clusterProvided`: manifests from git, where a Secret missing from the input is made by the cluster (cluster-provided.ts). */
  constructor(
    /** What the build read: the memos ask what changed in it since their last build (resource-changes.ts). */
    readonly resources: Resources,
    private readonly now: Date,
    /** Pairs parsed by earlier builds (`TranslateOptions.keyPairs`), kept for the Secrets in `resources`. */
    private readonly parsedKeyPairs: KeyPairCache,
    private readonly clusterProvided?: SecretOrigins,
  ) {}

  /** Runs `checks` and returns, with its result, what they did here (`SecretEffects`). */
  recording<T>(checks: () => T): { readonly value: T; readonly effects: SecretEffects } {
    const outer = this.log;
    const log: EffectLog = { files: [], summaries: [], references: [], objects: [], validities: [] };
    this.log = log;
    try {
      return { value: checks(), effects: log };
    } finally {
      this.log = outer;
      if (outer) for (const [name, entries] of Object.entries(log)) (outer[name as keyof EffectLog] as unknown[]).push(...entries);
    }
  }

  /** Does what `effects` record, as if their checks ran again. */
  replay(effects: SecretEffects): void {
    for (const file of effects.files) this.offer(file);
    for (const [path, summary] of effects.summaries) if (!this.summaries.has(path)) this.summaries.set(path, summary);
    for (const reference of effects.references) this.read.set(`${reference.kind}/${reference.namespace}/${reference.name}`, reference);
  }

  /**
   * Whether `effects` still hold: every object read is the same one now, and every certificate as valid.
   * With `changes` (since resources for which the effects held), an object not among them is the same.
   */
  stillHolds(effects: SecretEffects, changes?: ResourceChanges): boolean {
    const same = changes
      ? ([kind, id]: SecretEffects['objects'][number]) => !changes.changedAt(kind === 'Secret' ? 'secrets' : 'configMaps', id)
      : ([kind, id, object]: SecretEffects['objects'][number]) => this.objectNow(kind, id) === object;
    return (
      effects.objects.every(same) &&
      effects.validities.every(([period, validity]) => validityAt(period, this.now) === validity)
    );
  }

  private objectNow(kind: 'Secret' | 'ConfigMap', id: string): object | undefined {
    return (kind === 'Secret' ? this.resources.secrets.get(id) : this.resources.configMaps.get(id))?.object.raw;
  }

  private secretAt(id: string): Typed<SecretData> | undefined {
    const secret = this.resources.secrets.get(id);
    this.log?.objects.push(['Secret', id, secret?.object.raw]);
    return secret;
  }

  private configMapAt(id: string): Typed<Readonly<Record<string, string>>> | undefined {
    const configMap = this.resources.configMaps.get(id);
    this.log?.objects.push(['ConfigMap', id, configMap?.object.raw]);
    return configMap;
  }

  private offer(file: OutputFile): void {
    this.output.set(file.path, file);
    this.log?.files.push(file);
  }

  /**
   * For manifests from git: where a Secret that is not in the input is expected to come from, said for
   * `referrer`, which names it. Undefined when the Secret is in the input, or the input is not such
   * manifests (the cluster mode reads every Secret, so a missing one is missing).
   */
  expectedFromCluster(ref: ObjectRef, referrer: SourceObject): string | undefined {
    if (!this.clusterProvided || this.resources.secrets.has(key(ref.namespace, ref.name))) return undefined;
    return this.clusterProvided.describe(ref.namespace, ref.name, referrer);
  }

  /**
   * A stand-in for a TLS Secret the cluster makes (see `expectedFromCluster`): the default certificate
   * (what the host gets until the Secret exists), written where the Secret's own would be, so that nginx
   * -t loads a certificate there and the config names the file the cluster mode writes. No summary:
   * reports never show it as served.
   */
  standInCertificate(ref: ObjectRef): TlsFiles {
    const path = `tls/${fileStem('', ref)}.pem`;
    this.offer({ path, contents: this.standInContents, mode: keyMaterialMode });
    return { certificate: path, certificateKey: path };
  }

  /** The default certificate's files, chosen before any host is settled: stand-ins hold the same. */
  useAsStandIn(defaultTls: TlsFiles): void {
    this.standInContents = this.output.get(defaultTls.certificate)?.contents ?? this.standInContents;
  }

  /** Certificate and key to terminate TLS for `host`, checked: parses, key matches, covers host, in date. */
  serverCertificate(ref: ObjectRef, host: string | undefined): Checked<TlsFiles> {
    const pair = this.keyPair(ref);
    if (!pair.ok) return pair;
    if (host !== undefined && !certificateCoversHost(pair.value.dnsNames, host)) {
      const names = pair.value.dnsNames.length > 0 ? pair.value.dnsNames.join(', ') : 'no DNS names';
      return { ok: false, problem: `the certificate in Secret ${key(ref.namespace, ref.name)} does not cover ${host} (it covers ${names})` };
    }
    const dated = this.inDate(ref, pair.value);
    if (!dated.ok) return dated;
    return { ok: true, value: this.emitKeyPair('tls', ref, pair.value) };
  }

  /** Client certificate to present to a backend: `tls.crt`/`tls.key` of the Secret, if it has them. */
  clientCertificate(ref: ObjectRef): Checked<TlsFiles> | undefined {
    this.reads('Secret', ref);
    const secret = this.secretAt(key(ref.namespace, ref.name));
    if (!secret || (!secret.spec.data.has('tls.crt') && !secret.spec.data.has('tls.key'))) return undefined;
    const pair = this.keyPair(ref);
    if (!pair.ok) return pair;
    const dated = this.inDate(ref, pair.value);
    if (!dated.ok) return dated;
    return { ok: true, value: this.emitKeyPair('client', ref, pair.value) };
  }

  /** `ca.crt` of the Secret as a trusted-certificate file. */
  caBundle(ref: ObjectRef): Checked<string> {
    this.reads('Secret', ref);
    const id = key(ref.namespace, ref.name);
    const secret = this.secretAt(id);
    if (!secret) return { ok: false, problem: `Secret ${id} is not in the input` };
    const pem = secret.spec.data.get('ca.crt');
    if (pem === undefined) return { ok: false, problem: `Secret ${id} has no ca.crt` };
    let bundle = this.caBundles.get(id);
    if (!bundle) {
      bundle = parseCaBundle(pem);
      this.caBundles.set(id, bundle);
    }
    if (!bundle.ok) return { ok: false, problem: `Secret ${id}: ${bundle.problem}` };
    const path = `ca/${fileStem('', ref)}.crt`;
    this.offer({ path, contents: bundle.value.pem, mode: keyMaterialMode });
    return { ok: true, value: path };
  }

  /**
   * `ca.crl` of the Secret as a revocation-list file, when it has one: checked against its `ca.crt`
   * the way nginx loads both (`ssl_client_certificate` and `ssl_crl`).
   */
  revocationList(ref: ObjectRef): Checked<string> | undefined {
    this.reads('Secret', ref);
    const id = key(ref.namespace, ref.name);
    const pem = this.secretAt(id)?.spec.data.get('ca.crl');
    if (pem === undefined) return undefined;
    const ca = this.caBundles.get(id);
    if (!ca?.ok) return { ok: false, problem: `Secret ${id} has ca.crl but no usable ca.crt` };
    const crl = parseCrl(pem, ca.value.pem);
    if (!crl.ok) return { ok: false, problem: `Secret ${id}: ${crl.problem}` };
    const path = `ca/${fileStem('', ref)}.crl`;
    this.offer({ path, contents: crl.value.pem, mode: keyMaterialMode });
    return { ok: true, value: path };
  }

  /**
   * The users of a basic-auth Secret as an htpasswd file: `auth` holds htpasswd lines (`auth-file`), or
   * each key is a user and its value a password hash (`auth-map`). Every line must be `user:hash` in
   * printable characters, so nothing but credentials reaches the file nginx's workers read.
   */
  htpasswd(ref: ObjectRef, format: 'auth-file' | 'auth-map'): Checked<string> {
    this.reads('Secret', ref);
    const id = key(ref.namespace, ref.name);
    const secret = this.secretAt(id);
    if (!secret) return { ok: false, problem: `Secret ${id} is not in the input` };
    let lines: string[];
    if (format === 'auth-file') {
      const text = secret.spec.data.get('auth');
      if (text === undefined) return { ok: false, problem: `Secret ${id} has no key "auth" (auth-secret-type auth-file)` };
      lines = text.split(/\r?\n/).filter((line) => line.trim() !== '' && !line.startsWith('#'));
    } else {
      lines = [...secret.spec.data].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([user, hash]) => `${user}:${hash.trim()}`);
    }
    if (lines.length === 0) return { ok: false, problem: `Secret ${id} holds no users` };
    const bad = lines.findIndex((line) => !htpasswdLine.test(line));
    if (bad !== -1) return { ok: false, problem: `Secret ${id}: user ${bad + 1} is not "user:hash" in printable characters without spaces` };
    const path = `auth/${fileStem('', ref)}.htpasswd`;
    this.offer({ path, contents: `${lines.join('\n')}\n`, mode: keyMaterialMode, readByWorkers: true });
    return { ok: true, value: path };
  }

  /** A ConfigMap a claim reads as it is (`custom-headers`), recorded so that the cluster mode follows it. */
  configMap(ref: ObjectRef): Readonly<Record<string, string>> | undefined {
    this.reads('ConfigMap', ref);
    return this.configMapAt(key(ref.namespace, ref.name))?.spec;
  }

  /**
   * `ca.crt` of a ConfigMap (BackendTLSPolicy `caCertificateRefs`) as a trusted-certificate file, checked
   * to parse. With `emit: false` only the check is done, for a policy that ends up carrying no traffic.
   */
  configMapCaBundle(ref: ObjectRef, options: { readonly emit?: boolean } = {}): Checked<string> {
    this.reads('ConfigMap', ref);
    const id = key(ref.namespace, ref.name);
    const configMap = this.configMapAt(id);
    if (!configMap) return { ok: false, problem: `ConfigMap ${id} is not in the input` };
    const pem = configMap.spec['ca.crt'];
    if (pem === undefined) return { ok: false, problem: `ConfigMap ${id} has no ca.crt` };
    const cacheKey = `configmap:${id}`;
    let bundle = this.caBundles.get(cacheKey);
    if (!bundle) {
      bundle = parseCaBundle(pem);
      this.caBundles.set(cacheKey, bundle);
    }
    if (!bundle.ok) return { ok: false, problem: `ConfigMap ${id}: ${bundle.problem}` };
    const path = `ca/${fileStem('configmap_', ref)}.crt`;
    if (options.emit ?? true) this.offer({ path, contents: bundle.value.pem, mode: keyMaterialMode });
    return { ok: true, value: path };
  }

  /** A key pair that is not from a Secret (the bundled default certificate). */
  fixedKeyPair(fileStem: string, certPem: string, keyPem: string): TlsFiles {
    const path = `tls/${fileStem}.pem`;
    this.output.set(path, { path, contents: certPem + keyPem, mode: keyMaterialMode });
    this.summaries.set(path, summarize(certificateFacts(new X509Certificate(certPem))));
    return { certificate: path, certificateKey: path };
  }

  /** The certificate in a file this emitted (`TlsFiles.certificate`). */
  summary(certificateFile: string): CertificateSummary | undefined {
    return this.summaries.get(certificateFile);
  }

  /**
   * The files of everything checked so far, sorted by path: what a claim would need, whether or not it
   * wins. The build writes only those the config names (`filesNamedBy`).
   */
  checkedFiles(): OutputFile[] {
    return [...this.output.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /**
   * Every Secret and ConfigMap read for a CA, a client certificate or users, present or not, sorted:
   * the exact set the cluster mode follows (TLS Secrets of served certificates it watches by type).
   */
  references(): Reference[] {
    return [...this.read.values()].sort((a, b) => compareStrings(`${a.kind}/${a.namespace}/${a.name}`, `${b.kind}/${b.namespace}/${b.name}`));
  }

  private reads(kind: Reference['kind'], ref: ObjectRef): void {
    const reference: Reference = { kind, namespace: ref.namespace, name: ref.name };
    this.read.set(`${kind}/${ref.namespace}/${ref.name}`, reference);
    this.log?.references.push(reference);
  }

  private keyPair(ref: ObjectRef): Checked<KeyPair> {
    const id = key(ref.namespace, ref.name);
    this.secretAt(id);
    const cached = this.keyPairs.get(id);
    if (cached) return cached;
    const result = this.parseSecretKeyPair(id);
    this.keyPairs.set(id, result);
    return result;
  }

  private parseSecretKeyPair(id: string): Checked<KeyPair> {
    const secret = this.resources.secrets.get(id);
    if (!secret) return { ok: false, problem: `Secret ${id} is not in the input` };
    const certPem = secret.spec.data.get('tls.crt');
    const keyPem = secret.spec.data.get('tls.key');
    if (certPem === undefined || keyPem === undefined) {
      return { ok: false, problem: `Secret ${id} needs both tls.crt and tls.key (type kubernetes.io/tls)` };
    }
    const parsed = this.parsedKeyPairs.parsed(certPem, keyPem);
    return parsed.ok ? parsed : { ok: false, problem: `Secret ${id}: ${parsed.problem}` };
  }

  private inDate(ref: ObjectRef, pair: KeyPair): Checked<true> {
    const validity = validityAt(pair.validity, this.now);
    this.log?.validities.push([pair.validity, validity]);
    if (validity === 'valid') return { ok: true, value: true };
    const when = validity === 'expired' ? `expired on ${pair.leaf.validTo}` : `is not valid before ${pair.leaf.validFrom}`;
    return { ok: false, problem: `the certificate in Secret ${key(ref.namespace, ref.name)} ${when}` };
  }

  /** Chain and key in one 0600 file: nginx reads both from it, and there is one file per Secret to keep private. */
  private emitKeyPair(folder: 'tls' | 'client', ref: ObjectRef, pair: KeyPair): TlsFiles {
    const path = `${folder}/${fileStem('', ref)}.pem`;
    const known = this.output.get(path);
    if (known) {
      // Recorded all the same: the memo plays a claim's files back without the claim that offered them first.
      this.log?.files.push(known);
      const summary = this.summaries.get(path);
      if (summary) this.log?.summaries.push([path, summary]);
    } else {
      const summary = { ...summarize(pair.leaf, pair.dnsNames), secret: { namespace: ref.namespace, name: ref.name } };
      this.offer({ path, contents: pair.chainPem + pair.keyPem, mode: keyMaterialMode });
      this.summaries.set(path, summary);
      this.log?.summaries.push([path, summary]);
    }
    return { certificate: path, certificateKey: path };
  }
}

function summarize(leaf: CertificateFacts, dnsNames?: readonly string[]): CertificateSummary {
  const issuerSerialNumber = /^serialNumber=(.*)$/m.exec(leaf.issuer)?.[1];
  return {
    subject: leaf.subject.replace(/\n/g, ', '),
    issuer: leaf.issuer.replace(/\n/g, ', '),
    dnsNames: dnsNames ?? (leaf.subjectAltName ?? '').split(/,\s*/).filter((e) => e.startsWith('DNS:')).map((e) => e.slice(4)),
    notAfter: new Date(leaf.validTo).toISOString(),
    serialNumber: BigInt(`0x${leaf.serialNumber}`).toString(),
    ...(issuerSerialNumber !== undefined && { issuerSerialNumber }),
  };
}
