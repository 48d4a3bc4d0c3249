import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { FakeApiServer, type JsonObject } from '../support/fake-apiserver.js';

/**
 * `audit --cluster`: the migration report read from a live cluster (the loopback fake API server) is
 * the report of the same objects read from files, minus file and line; a cluster that refuses the
 * lists, or that cannot be reached, is a failure (exit 2) with the reason, never an empty report.
 */

const fixture = 'fixtures/annotations/input/annotations.yaml';
const configMap = ['--configmap', 'ingress-nginx/ingress-nginx-controller'];

interface AuditJson {
  ingressesWithErrors: { errors: { file: string | null; line: number | null; column?: number | null }[] }[];
}

/** File positions exist only for manifests; everything else must be the same. */
function withoutPositions(stdout: string): unknown {
  const report = JSON.parse(stdout) as AuditJson;
  for (const ingress of report.ingressesWithErrors) {
    for (const error of ingress.errors) {
      error.file = null;
      error.line = null;
      if ('column' in error) error.column = null;
    }
  }
  return report;
}

let api: FakeApiServer;
let kubeconfig: string;

beforeAll(async () => {
  api = await FakeApiServer.start({ tls: true, token: 'audit-test' });
  kubeconfig = await api.writeKubeconfig();
  const objects = parseAllDocuments(await readFile(fixture, 'utf8')).map((document) => document.toJS() as JsonObject);
  const namespaces = new Set(objects.map((object) => (object.metadata as { namespace?: string }).namespace).filter((ns) => ns !== undefined));
  for (const ns of namespaces) api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (const object of objects) api.create(object);
});

afterAll(async () => {
  await api.close();
});

describe('audit --cluster', () => {
  it('reports on the cluster what it reports on the same objects as files', async () => {
    const fromFiles = await runCli(['audit', '-f', fixture, ...configMap, '--format', 'json']);
    const fromCluster = await runCli(['audit', '--cluster', '--kubeconfig', kubeconfig, ...configMap, '--format', 'json']);
    expect(fromCluster.stderr).toBe('');
    expect(fromCluster.exitCode).toBe(fromFiles.exitCode);
    expect(fromCluster.exitCode).toBe(1);
    expect(withoutPositions(fromCluster.stdout)).toEqual(withoutPositions(fromFiles.stdout));
    // The controller ConfigMap is read too: it is followed by name, not listed by kind.
    expect((JSON.parse(fromCluster.stdout) as { configMapKeys: unknown[] }).configMapKeys.length).toBeGreaterThan(0);
  });

  it('reads KUBECONFIG from the environment and only the namespaces asked for', async () => {
    const result = await runCli(['audit', '--cluster', '--namespace', 'other', '--format', 'json'], { env: { KUBECONFIG: kubeconfig } });
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout) as { ingresses: number; annotations: { examples: string[] }[] };
    expect(report.ingresses).toBeGreaterThan(0);
    expect(report.annotations.flatMap((usage) => usage.examples).every((example) => example.startsWith('other/'))).toBe(true);
  });

  it('exits 2 with the reason when the API refuses to list', async () => {
    api.failNext({ verb: 'list', status: 403, count: 100, message: 'ingresses.networking.k8s.io is forbidden' });
    const result = await runCli(['audit', '--cluster', '--kubeconfig', kubeconfig]);
    api.failNext({ verb: 'list', status: 403, count: 0 });
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^ingress2nginx: the API refused access: .*forbidden/);
  });

  it('exits 2 when no cluster can be found or reached, and when the source is not one of -f or --cluster', async () => {
    const none = await runCli(['audit', '--cluster'], { env: {} });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/^ingress2nginx: .*kubeconfig/i);
    const both = await runCli(['audit', '--cluster', '-f', fixture]);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('give either -f (manifests) or --cluster');
    const neither = await runCli(['audit']);
    expect(neither.exitCode).toBe(2);
    const stray = await runCli(['audit', '-f', fixture, '--namespace', 'web']);
    expect(stray.exitCode).toBe(2);
    expect(stray.stderr).toContain('--kubeconfig and --namespace go with --cluster');
  });
});
