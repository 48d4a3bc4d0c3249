import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { stringify } from 'yaml';
import { testNow } from './options.js';

/**
 * Real certificates made with the `openssl` CLI. Every certificate is signed through `openssl ca`,
 * because openssl 3.0 (Debian 12) can set an arbitrary validity window only there
 * (`-startdate`/`-enddate`); that is what makes an already-expired certificate possible.
 * Each issuance gets its own directory and `openssl ca` database, so concurrent issuance from one
 * CA needs no locking; `-rand_serial` keeps serial numbers unique per issuer.
 * Weak keys and digests (`rsa-1024`, `ec-p192`, SHA-1) are for testing what OpenSSL refuses.
 */

/** `rsa-BITS` for any size openssl generates. */
export type KeyType = 'ec-p256' | 'ec-p192' | 'ed25519' | `rsa-${number}`;

/** How the issuer signs: its digest (an Ed25519 issuer has none), and RSASSA-PSS for an RSA issuer. */
export interface Signature {
  /** Default `sha256`. */
  readonly digest?: 'sha256' | 'sha1' | 'md5';
  /** Default false (PKCS #1 v1.5). */
  readonly pss?: boolean;
}

export interface CertificateFiles {
  readonly certPem: string;
  readonly keyPem: string;
  readonly certFile: string;
  readonly keyFile: string;
}

export interface CertificateAuthority extends CertificateFiles {
  readonly name: string;
  /** Directory holding the CA's files; certificates it issues are written beneath it. */
  readonly dir: string;
}

export interface CertificateRequest {
  readonly commonName: string;
  /** DNS names (`*.example.com` allowed); entries that are IP addresses become IP SANs. */
  readonly sans?: readonly string[];
  /** Start of validity; default a day before the earlier of the tests' clock and the machine's (see `validAroundNow`). */
  readonly notBefore?: Date;
  /**
   * Length of validity from `notBefore`; default: until a year after the later of the two clocks. A
   * `notBefore` before the tests' clock (`daysFromTestNow`) + short `days` = expired at the tests' clock.
   */
  readonly days?: number;
  /** Default true. */
  readonly serverAuth?: boolean;
  /** Default false. */
  readonly clientAuth?: boolean;
  /** Default `ec-p256` (fast to generate). */
  readonly keyType?: KeyType;
  readonly signature?: Signature;
}

const DAY_MS = 86_400_000;

/**
 * The default validity window: from a day before the earlier of the tests' clock (at which translate
 * checks certificates) and the machine's clock (at which nginx, openssl and Node's TLS clients in the
 * integration tests check them), until `years` after the later of the two. So the same certificates pass
 * both checks on any day, with the machine's clock moved ahead too (CI runs the unit tests under faketime).
 */
function validAroundNow(years: number): { notBefore: Date; days: number } {
  const machineNow = Date.now();
  const notBefore = new Date(Math.min(testNow.getTime(), machineNow) - DAY_MS);
  const notAfter = Math.max(testNow.getTime(), machineNow) + years * 365 * DAY_MS;
  return { notBefore, days: Math.ceil((notAfter - notBefore.getTime()) / DAY_MS) };
}

/** A request's window: as given, else `validAroundNow`; `days` alone counts from the default start. */
function windowOf(request: Pick<CertificateRequest, 'notBefore' | 'days'>): { notBefore: Date; days: number } {
  const around = validAroundNow(1);
  if (request.notBefore === undefined) return { notBefore: around.notBefore, days: request.days ?? around.days };
  return { notBefore: request.notBefore, days: request.days ?? 365 };
}

const OPENSSL_CA_CONFIG = (workDir: string): string => `
[ ca ]
default_ca = issuing_ca

[ issuing_ca ]
database = ${workDir}/index.txt
serial = ${workDir}/serial
new_certs_dir = ${workDir}
default_md = sha256
policy = policy_anything
unique_subject = no
copy_extensions = none
email_in_dn = no

[ policy_anything ]
commonName = supplied

[ req ]
distinguished_name = req_distinguished_name

[ req_distinguished_name ]
`;

/** `openssl ca -startdate/-enddate` take ASN.1 GeneralizedTime: YYYYMMDDHHMMSSZ. */
function generalizedTime(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, '').replace(/\.\d{3}Z$/, 'Z');
}

/** `-subj` treats `/`, `+` and `=` as syntax. */
function subjectForCommonName(commonName: string): string {
  return `/CN=${commonName.replace(/[/+=\\]/g, (c) => `\\${c}`)}`;
}

function fileSlug(name: string): string {
  return name.replace(/[^A-Za-z0-9.-]+/g, '_').replace(/^\*/, 'wildcard') || 'cert';
}

async function openssl(args: readonly string[]): Promise<void> {
  await execa('openssl', args, { stdin: 'ignore' });
}

function keyAlgorithm(keyType: KeyType): string[] {
  switch (keyType) {
    case 'ec-p256':
      return ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'];
    case 'ec-p192':
      return ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-192'];
    case 'ed25519':
      return ['-algorithm', 'ED25519'];
    default:
      return ['-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${keyType.slice('rsa-'.length)}`];
  }
}

async function generateKey(keyFile: string, keyType: KeyType): Promise<void> {
  await openssl(['genpkey', ...keyAlgorithm(keyType), '-out', keyFile]);
  await chmod(keyFile, 0o600);
}

function leafExtensions(request: CertificateRequest, keyType: KeyType): string {
  const keyUsage = keyType.startsWith('rsa-') ? 'digitalSignature, keyEncipherment' : 'digitalSignature';
  const extendedKeyUsage = [
    ...(request.serverAuth ?? true ? ['serverAuth'] : []),
    ...(request.clientAuth ?? false ? ['clientAuth'] : []),
  ];
  const sans = (request.sans ?? []).map((san) => (net.isIP(san) ? `IP:${san}` : `DNS:${san}`));
  return [
    '[ extensions ]',
    'basicConstraints = critical, CA:FALSE',
    `keyUsage = critical, ${keyUsage}`,
    'subjectKeyIdentifier = hash',
    ...(extendedKeyUsage.length > 0 ? [`extendedKeyUsage = ${extendedKeyUsage.join(', ')}`] : []),
    ...(sans.length > 0 ? [`subjectAltName = ${sans.join(', ')}`] : []),
    '',
  ].join('\n');
}

const CA_EXTENSIONS = [
  '[ extensions ]',
  'basicConstraints = critical, CA:TRUE',
  'keyUsage = critical, keyCertSign, cRLSign, digitalSignature',
  'subjectKeyIdentifier = hash',
  '',
].join('\n');

interface SigningJob {
  readonly workDir: string;
  readonly commonName: string;
  readonly keyType: KeyType;
  readonly extensions: string;
  readonly notBefore: Date;
  readonly days: number;
  /** Absent: the new key signs its own certificate. */
  readonly issuer?: CertificateFiles;
  readonly signature?: Signature;
}

async function signCertificate(job: SigningJob): Promise<CertificateFiles> {
  const { workDir } = job;
  const configFile = path.join(workDir, 'openssl.cnf');
  const extensionsFile = path.join(workDir, 'extensions.cnf');
  const csrFile = path.join(workDir, 'request.csr');
  const keyFile = path.join(workDir, 'key.pem');
  const certFile = path.join(workDir, 'cert.pem');
  await writeFile(configFile, OPENSSL_CA_CONFIG(workDir));
  await writeFile(extensionsFile, job.extensions);
  await writeFile(path.join(workDir, 'index.txt'), '');
  await generateKey(keyFile, job.keyType);
  await openssl(['req', '-new', '-config', configFile, '-key', keyFile, '-subj', subjectForCommonName(job.commonName), '-out', csrFile]);

  const notAfter = new Date(job.notBefore.getTime() + job.days * DAY_MS);
  const issuerArgs = job.issuer
    ? ['-cert', job.issuer.certFile, '-keyfile', job.issuer.keyFile]
    : ['-selfsign', '-keyfile', keyFile];
  await openssl([
    'ca', '-batch', '-notext', '-rand_serial',
    '-config', configFile,
    ...issuerArgs,
    '-in', csrFile,
    '-out', certFile,
    '-startdate', generalizedTime(job.notBefore),
    '-enddate', generalizedTime(notAfter),
    '-extfile', extensionsFile,
    '-extensions', 'extensions',
    '-md', job.signature?.digest ?? 'sha256',
    ...(job.signature?.pss ? ['-sigopt', 'rsa_padding_mode:pss'] : []),
  ]);
  return { certPem: await readFile(certFile, 'utf8'), keyPem: await readFile(keyFile, 'utf8'), certFile, keyFile };
}

/**
 * A CA valid around both clocks for ten years (`validAroundNow`), in a new directory under `dir`: a
 * self-signed root, or an intermediate signed by `issuer`.
 */
export async function createCa(
  dir: string,
  name: string,
  options: { keyType?: KeyType; signature?: Signature; issuer?: CertificateAuthority } = {},
): Promise<CertificateAuthority> {
  const caDir = await mkdtemp(path.join(dir, `${fileSlug(name)}-ca-`));
  const files = await signCertificate({
    workDir: caDir,
    commonName: name,
    keyType: options.keyType ?? 'ec-p256',
    extensions: CA_EXTENSIONS,
    ...validAroundNow(10),
    issuer: options.issuer,
    signature: options.signature,
  });
  return { ...files, name, dir: caDir };
}

/** A leaf certificate signed by `ca`, written to a new directory under `ca.dir`. */
export async function issueCertificate(ca: CertificateAuthority, request: CertificateRequest): Promise<CertificateFiles> {
  const keyType = request.keyType ?? 'ec-p256';
  return signCertificate({
    workDir: await mkdtemp(path.join(ca.dir, `${fileSlug(request.commonName)}-`)),
    commonName: request.commonName,
    keyType,
    extensions: leafExtensions(request, keyType),
    ...windowOf(request),
    issuer: ca,
    signature: request.signature,
  });
}

/** A self-signed leaf certificate (no CA), written to a new directory under `dir`. */
export async function selfSigned(dir: string, request: CertificateRequest): Promise<CertificateFiles> {
  const keyType = request.keyType ?? 'ec-p256';
  return signCertificate({
    workDir: await mkdtemp(path.join(dir, `${fileSlug(request.commonName)}-self-`)),
    commonName: request.commonName,
    keyType,
    extensions: leafExtensions(request, keyType),
    ...windowOf(request),
    signature: request.signature,
  });
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

function secretManifest(name: string, namespace: string, type: string, data: Record<string, string>): string {
  return stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type, data });
}

/** A `kubernetes.io/tls` Secret (YAML) carrying `tls.crt`/`tls.key` and, if given, `ca.crt`. */
export function tlsSecretManifest(options: {
  name: string;
  namespace?: string;
  certificate: Pick<CertificateFiles, 'certPem' | 'keyPem'>;
  caPem?: string;
}): string {
  const data: Record<string, string> = {
    'tls.crt': base64(options.certificate.certPem),
    'tls.key': base64(options.certificate.keyPem),
  };
  if (options.caPem !== undefined) data['ca.crt'] = base64(options.caPem);
  return secretManifest(options.name, options.namespace ?? 'default', 'kubernetes.io/tls', data);
}

/** An Opaque Secret (YAML) carrying only `ca.crt`, as `proxy-ssl-secret` may reference. */
export function caSecretManifest(options: { name: string; namespace?: string; caPem: string }): string {
  return secretManifest(options.name, options.namespace ?? 'default', 'Opaque', { 'ca.crt': base64(options.caPem) });
}
