import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../support/cli.js';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { testNowText } from '../support/options.js';

/**
 * Nothing from a manifest, a file name or the API reaches the terminal raw: escape sequences, line
 * breaks and bidirectional overrides are shown escaped, in every command and on every error path; and
 * every environment error is one line with exit 2, never a stack trace.
 */

const hostile = 'v1\u001b[31mRED\r\nfake.yaml:1:1: error [forged] Ingress a/b: forged\u202eabc';
const raw = /[\u001b\r\u202e]/;
const common = ['--now', testNowText, '--run-dir', '/tmp/ingress2nginx-golden'];

let work: string;
let manifests: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ingress2nginx-terminal-'));
  manifests = join(work, 'in.json');
  const ingress = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'x', namespace: 'a', annotations: { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true', 'ingress2nginx.dev/backend-proxy-protocol': hostile } },
    spec: { ingressClassName: 'nginx', rules: [{ host: 'a.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 's', port: { number: 443 } } } }] } }] },
  };
  const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'a' }, spec: { clusterIP: '10.0.0.1', ports: [{ port: 443 }] } };
  await writeFile(manifests, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [ingress, service] }));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function expectSafe(result: CliRun, what: string): void {
  expect(result.stdout, what).not.toMatch(raw);
  expect(result.stderr, what).not.toMatch(raw);
  // No line that the value forged: every diagnostic line starts at a real place.
  expect(`${result.stdout}\n${result.stderr}`, what).not.toMatch(/^fake\.yaml:1:1: error \[forged\]/m);
}

/** The one-line report of an environment problem: exit 2, nothing on stdout, no stack trace. */
function expectOneLine(result: CliRun, message: RegExp): void {
  expect(result.exitCode).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).not.toContain('internal error');
  expect(result.stderr.split('\n')).toEqual([expect.stringMatching(/^ingress2nginx: /), '']);
  expect(result.stderr).toMatch(message);
}

describe('echoed values', () => {
  it('backend-proxy-protocol: the value is described, not echoed, and every command shows it escaped', async () => {
    const validate = await runCli(['validate', '-f', manifests, ...common]);
    expect(validate.stderr).toContain('must be "v1" or "v2" (it contains characters that are never accepted here');
    const out = join(work, 'out');
    for (const argv of [
      ['validate', '-f', manifests],
      ['validate', '-f', manifests, '--format', 'markdown'],
      ['routes', '-f', manifests],
      ['render', '-f', manifests, '-o', out],
      ['diff', '-f', manifests, '--base-manifests', 'fixtures/termination/input'],
      ['diff', '-f', manifests, '--against', out],
      ['audit', '-f', manifests],
    ]) {
      expectSafe(await runCli([...argv, ...common]), argv.join(' '));
    }
  });

  it('a file name and a missing path are shown escaped', async () => {
    const dir = join(work, `names-\u001b[2J\u202e`);
    await mkdir(dir);
    await writeFile(join(dir, 'x.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: "bad name"}\n');
    expectSafe(await runCli(['validate', '-f', dir, ...common]), 'diagnostic file');
    expectSafe(await runCli(['validate', '-f', join(dir, 'missing\r\n.yaml'), ...common]), 'missing input');
    expectSafe(await runCli(['validate', '-f', join(dir, 'empty'), ...common]), 'empty input');
  });
});

describe('API text', () => {
  let api: FakeApiServer;
  let kubeconfig: string;
  beforeAll(async () => {
    api = await FakeApiServer.start({ tls: true, token: 'terminal-test' });
    kubeconfig = await api.writeKubeconfig();
  });
  afterAll(async () => {
    await api.close();
  });

  it('a 403 Status message reaches the terminal escaped, on one line, exit 2', async () => {
    api.failNext({ verb: 'list', status: 403, count: 100, message: `ingresses is forbidden${hostile}` });
    const result = await runCli(['audit', '--cluster', '--kubeconfig', kubeconfig, '--timeout', '5']);
    api.failNext({ verb: 'list', status: 403, count: 0 });
    expectOneLine(result, /^ingress2nginx: the API refused access: .*forbidden.*\\u001b\[31mRED\\r\\n.*\\u202eabc/);
    expectSafe(result, 'audit --cluster');
  });
});

describe('environment errors are one line', () => {
  it('review -o a folder, or into a folder that does not exist', async () => {
    const folder = join(work, 'pages');
    await mkdir(folder);
    expectOneLine(
      await runCli(['review', '-f', 'fixtures/termination/input', '-o', folder, ...common]),
      /cannot write the review page \S+pages: it is a folder; give a file name, such as \S+pages\/review\.html/,
    );
    expect(await readdir(folder)).toEqual([]);
    expect((await readdir(work)).filter((name) => name.includes('.tmp-'))).toEqual([]);
    expectOneLine(
      await runCli(['review', '-f', 'fixtures/termination/input', '-o', join(work, 'missing', 'review.html'), ...common]),
      /cannot write the review page \S+review\.html: the folder \S+missing does not exist/,
    );
  });

  it('review -o a file under a file', async () => {
    const file = join(work, 'a-file');
    await writeFile(file, '');
    expectOneLine(await runCli(['review', '-f', 'fixtures/termination/input', '-o', join(file, 'review.html'), ...common]), /is not a folder/);
  });
});
