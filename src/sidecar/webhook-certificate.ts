/**
 * The webhook's serving certificate without cert-manager (`--validating-webhook-ca-secret`): one CA for
 * all replicas, kept in a Secret that deploy/ ships empty (the first replica fills it; a replica that
 * loses the race reads the winner's), a leaf per replica for the webhook Service's names signed by it at
 * start, and the CA written into the `caBundle` of exactly our ValidatingWebhookConfiguration. The keys
 * are made by the `openssl` of the image (Node has no certificate issuance).
 */
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { ApiError, type ApiClient } from '../sources/cluster/client.js';
import type { Logger } from './log.js';

export interface WebhookCertificateOptions {
  /** The Secret that holds the CA (`ca.crt`, `ca.key`); it must exist, it may be empty. */
  readonly caSecret: { readonly namespace: string; readonly name: string };
  /** The ValidatingWebhookConfiguration whose `caBundle` is set. */
  readonly configuration: string;
  /** The webhook Service, in `caSecret`'s namespace: the leaf's names. */
  readonly service: string;
  readonly clusterDomain: string;
  /** Where the leaf's certificate (then the CA's) and key are written. */
  readonly certificateFile: string;
  readonly keyFile: string;
}

interface SecretObject {
  metadata: { resourceVersion?: string };
  data?: Record<string, string>;
}

interface CaPair {
  readonly certPem: string;
  readonly keyPem: string;
}

const caDays = 3650;
const leafDays = 365;
/** The leaf is issued again this often (the server reads the new files): it never gets near its end. */
export const leafRenewalMs = 24 * 3600 * 1000;

async function openssl(dir: string, args: readonly string[]): Promise<void> {
  const result = await execa('openssl', args, { cwd: dir, reject: false, stdin: 'ignore' });
  if (result.exitCode !== 0) throw new Error(`openssl ${args[0] ?? ''} failed: ${(result.stderr || String(result.message ?? '')).trim()}`);
}

async function newCa(dir: string): Promise<CaPair> {
  await openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', String(caDays), '-subj', '/CN=ingress2nginx admission CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  return { certPem: await readFile(join(dir, 'ca.crt'), 'utf8'), keyPem: await readFile(join(dir, 'ca.key'), 'utf8') };
}

/** The leaf for `names`, signed by `ca`: its certificate (then the CA's) and key. */
async function newLeaf(dir: string, ca: CaPair, names: readonly string[]): Promise<CaPair> {
  await writeFile(join(dir, 'ca.crt'), ca.certPem);
  await writeFile(join(dir, 'ca.key'), ca.keyPem, { mode: 0o600 });
  await writeFile(join(dir, 'leaf.ext'), `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\nbasicConstraints=critical,CA:FALSE\n`);
  await openssl(dir, ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', `/CN=${names[0]}`]);
  await openssl(dir, ['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', `0x${Date.now().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`, '-days', String(leafDays), '-extfile', 'leaf.ext', '-out', 'leaf.crt']);
  return { certPem: `${await readFile(join(dir, 'leaf.crt'), 'utf8')}${ca.certPem}`, keyPem: await readFile(join(dir, 'leaf.key'), 'utf8') };
}

const decode = (value: string | undefined) => (value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8'));

/** The CA of the Secret, filled first when it is empty (a conflict means another replica filled it: read again). */
async function sharedCa(client: ApiClient, options: WebhookCertificateOptions, scratch: string, log: Logger): Promise<CaPair> {
  const path = `/api/v1/namespaces/${options.caSecret.namespace}/secrets/${options.caSecret.name}`;
  for (let attempt = 0; ; attempt++) {
    const secret = await client.request<SecretObject>('GET', path);
    const held = { certPem: decode(secret.data?.['ca.crt']), keyPem: decode(secret.data?.['ca.key']) };
    if (held.certPem !== '' && held.keyPem !== '') return held;
    const made = await newCa(scratch);
    const data = { ...secret.data, 'ca.crt': Buffer.from(made.certPem).toString('base64'), 'ca.key': Buffer.from(made.keyPem).toString('base64') };
    try {
      await client.request('PUT', path, { body: { ...secret, data } });
      log.info('made the admission webhook CA', { secret: `${options.caSecret.namespace}/${options.caSecret.name}` });
      return made;
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 409) || attempt > 3) throw error;
    }
  }
}

/** Sets `caBundle` on every webhook of our configuration that lacks it (JSON patch: only those fields). */
async function injectCaBundle(client: ApiClient, name: string, caPem: string, log: Logger): Promise<void> {
  const path = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`;
  let configuration: { webhooks?: { clientConfig?: { caBundle?: string } }[] };
  try {
    configuration = await client.request('GET', path);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      log.warn('no ValidatingWebhookConfiguration to set the CA of; nothing calls the webhook', { configuration: name });
      return;
    }
    throw error;
  }
  const bundle = Buffer.from(caPem).toString('base64');
  const ops = (configuration.webhooks ?? []).flatMap((hook, index) => (hook.clientConfig?.caBundle === bundle ? [] : [{ op: 'add', path: `/webhooks/${index}/clientConfig/caBundle`, value: bundle }]));
  if (ops.length === 0) return;
  await client.request('PATCH', path, { body: ops, contentType: 'application/json-patch+json' });
  log.info('set the CA of the ValidatingWebhookConfiguration', { configuration: name, webhooks: ops.length });
}

/** Written whole or not at all (a temporary file renamed), readable by us alone when `mode` says so. */
async function writeAtomically(file: string, contents: string, mode: number): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(`${file}.tmp`, contents, { mode });
  await rename(`${file}.tmp`, file);
}

/** Makes the files `--validating-webhook-certificate`/`-key` name. */
async function provisionWebhookCertificate(client: ApiClient, options: WebhookCertificateOptions, log: Logger): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'ingress2nginx-webhook-ca-'));
  try {
    const ca = await sharedCa(client, options, scratch, log);
    const { namespace } = options.caSecret;
    const names = [`${options.service}.${namespace}.svc`, `${options.service}.${namespace}.svc.${options.clusterDomain}`, `${options.service}.${namespace}`, options.service];
    const leaf = await newLeaf(scratch, ca, names);
    await writeAtomically(options.keyFile, leaf.keyPem, 0o600);
    await writeAtomically(options.certificateFile, leaf.certPem, 0o644);
    await injectCaBundle(client, options.configuration, ca.certPem, log);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Provisions the certificate now, then again every day in the background (a failure is logged and the
 * files stay as they are); resolves, once the first is in place, with how to stop the renewals.
 */
export async function keepWebhookCertificate(client: ApiClient, options: WebhookCertificateOptions, log: Logger, renewEveryMs = leafRenewalMs): Promise<() => void> {
  await provisionWebhookCertificate(client, options, log);
  const renewal = setInterval(() => {
    provisionWebhookCertificate(client, options, log).catch((error: Error) => log.warn('could not issue the admission webhook certificate again; keeping the one in use', { error: error.message }));
  }, renewEveryMs);
  renewal.unref();
  return () => clearInterval(renewal);
}
