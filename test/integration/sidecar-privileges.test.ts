import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployedContainer, deployedPod } from '../support/deployment.js';
import { requireNginx } from '../support/nginx.js';
import { httpsGet } from '../support/peers.js';
import { createCa, issueCertificate, type CertificateAuthority, type CertificateFiles } from '../support/pki.js';
import { freePorts } from '../support/ports.js';
import { eventually } from '../support/sidecar.js';

/**
 * The sidecar as deploy/ runs it: the user, group and capabilities of its container (read from
 * deploy/base/deployment.yaml) applied with setpriv. It renders basic auth and certificates read per
 * handshake, nginx -t included, without changing any file's owner, and an nginx run the same way (the
 * nginx container's user) serves them: the workers read the key and password files it wrote.
 * Needs root to change to that user; CI and this machine run the tests as root.
 */

const root = process.getuid?.() === 0;
const binary = join(import.meta.dirname, '..', '..', 'bin', 'ingress2nginx');
/** password "secret", apr1 as htpasswd writes it. */
const aliceHtpasswd = 'alice:$apr1$3Q7c0Hzf$6CSsL8aDfJkYhPYAn4fuq1\n';

/** The effective user, group and capabilities of a container of deploy/'s Deployment. */
async function deployedAs(container: string): Promise<{ uid: number; gid: number; add: string[]; drop: string[] }> {
  const pod = await deployedPod();
  const own = (await deployedContainer(container)).securityContext ?? {};
  // Without runAsUser the container runs as root (deploy/'s images say otherwise, but it says so itself).
  return {
    uid: own.runAsUser ?? pod.securityContext.runAsUser ?? 0,
    gid: own.runAsGroup ?? pod.securityContext.runAsGroup ?? 0,
    add: own.capabilities?.add ?? [],
    drop: own.capabilities?.drop ?? [],
  };
}

/** `setpriv` arguments for exactly that: no supplementary groups, no capability beyond those added. */
function setprivArgs(as: { uid: number; gid: number; add: string[]; drop: string[] }): string[] {
  expect(as.drop).toEqual(['ALL']);
  const capabilities = ['-all', ...as.add.map((c) => `+${c.toLowerCase()}`)].join(',');
  return [`--reuid=${as.uid}`, `--regid=${as.gid}`, '--clear-groups', `--bounding-set=${capabilities}`, `--inh-caps=${capabilities}`, '--no-new-privs'];
}

let scratch: string;
let ca: CertificateAuthority;
let site: CertificateFiles;
/** An Ingress with basic auth and TLS, its Secrets and Service. */
let input: string;
let nginx: ResultPromise | undefined;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'i2n-privileges-'));
  await chmod(scratch, 0o755);
  ca = await createCa(scratch, 'Privileges CA');
  site = await issueCertificate(ca, { commonName: 'guarded.example.test', sans: ['guarded.example.test'] });
  input = join(scratch, 'input.yaml');
  await writeFile(
    input,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'app', namespace: 'web' }, spec: { clusterIP: '127.0.0.1', ports: [{ port: 9 }] } },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'site-tls', namespace: 'web' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': site.certPem, 'tls.key': site.keyPem } },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users', namespace: 'web' }, type: 'Opaque', stringData: { auth: aliceHtpasswd } },
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'Ingress',
          metadata: { name: 'guarded', namespace: 'web', annotations: { 'nginx.ingress.kubernetes.io/auth-type': 'basic', 'nginx.ingress.kubernetes.io/auth-secret': 'users' } },
          spec: {
            ingressClassName: 'nginx',
            tls: [{ hosts: ['guarded.example.test'], secretName: 'site-tls' }],
            rules: [{ host: 'guarded.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 9 } } } }] } }],
          },
        },
      ],
    }),
  );
});

afterAll(async () => {
  nginx?.kill('SIGTERM');
  await nginx?.catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
});

/** A folder the deployed user owns, as an emptyDir is writable to it. */
async function ownedFolder(name: string, as: { uid: number; gid: number }): Promise<string> {
  const dir = join(scratch, name);
  await mkdir(dir, { mode: 0o755 });
  await chown(dir, as.uid, as.gid);
  return dir;
}

describe.runIf(root)('the user and capabilities deploy/ gives the sidecar', () => {
  it('render basic auth and certificates read per handshake (nginx -t included) without a chown, and nginx run as its own user serves them', async () => {
    const sidecar = await deployedAs('ingress2nginx');
    const server = await deployedAs('nginx');
    const out = await ownedFolder('out', sidecar);
    const runDir = await ownedFolder('run', sidecar);
    const [httpPort, httpsPort] = (await freePorts(2)) as [number, number];
    const rendered = await execa(
      'setpriv',
      [
        ...setprivArgs(sidecar),
        process.execPath,
        binary,
        ...['render', '-f', input, '-o', out, '--check', '--certificates-per-handshake', '--nginx-bin', requireNginx().binary],
        ...['--run-dir', runDir, '--http-port', String(httpPort), '--https-port', String(httpsPort)],
      ],
      { reject: false },
    );
    expect(rendered.stderr).toMatch(/\n0 error\(s\), 0 warning\(s\)/);
    expect(rendered.exitCode).toBe(0);
    for (const folder of ['auth', 'tls']) {
      for (const file of await readdir(join(out, folder))) {
        const info = await stat(join(out, folder, file));
        expect([info.uid, info.gid, info.mode & 0o777], `${folder}/${file}`).toEqual([sidecar.uid, sidecar.gid, 0o600]);
      }
    }
    expect(await readdir(join(out, 'auth'))).toHaveLength(1);

    // The nginx container's user: the same, so its workers read the 0600 files as their owner.
    expect([server.uid, server.gid]).toEqual([sidecar.uid, sidecar.gid]);
    const prefix = await ownedFolder('prefix', server);
    nginx = execa('setpriv', [...setprivArgs(server), requireNginx().binary, '-e', 'stderr', '-p', `${prefix}/`, '-c', join(out, 'nginx.conf'), '-g', 'daemon off;'], {
      reject: false,
    });
    const get = (headers: Record<string, string> = {}) =>
      httpsGet({ port: httpsPort, servername: 'guarded.example.test', ca: ca.certPem, headers }).then(
        (response) => response,
        () => undefined,
      );
    const unauthorized = await eventually(get, (response) => response !== undefined, 15_000);
    expect(unauthorized?.status).toBe(401);
    expect(unauthorized?.peerCertificate?.subjectCN).toBe('guarded.example.test');
    const authorized = await get({ authorization: `Basic ${Buffer.from('alice:secret').toString('base64')}` });
    // The backend at port 9 is not there: past the password check, nginx answers 502.
    expect(authorized?.status).toBe(502);
  });

  it('as root without CAP_CHOWN (what deploy/ gave the sidecar before) says what to do instead of "operation not permitted"', async () => {
    const out = join(scratch, 'out-root');
    const rendered = await execa(
      'setpriv',
      ['--bounding-set=-all,+kill', '--inh-caps=-all', process.execPath, binary, 'render', '-f', input, '-o', out, '--nginx-bin', requireNginx().binary],
      { reject: false },
    );
    expect(rendered.exitCode).toBe(2);
    expect(rendered.stderr).toMatch(/cannot give web_users\.htpasswd to nginx's worker user \(uid \d+\), which reads it at request time: this root process may not change owners \(no CAP_CHOWN\)\. Run ingress2nginx as the user nginx runs as/);
  });
});
