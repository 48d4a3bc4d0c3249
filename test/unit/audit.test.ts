import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

/**
 * `ingress2nginx audit`: the migration report over manifests, in text, markdown and json, and its exit
 * codes (0: every Ingress is served as written; 1: some would be left out or served with errors, or
 * with --strict an annotation is ignored; 2: usage).
 */

const fixture = 'fixtures/annotations/input';
const configMap = ['--configmap', 'ingress-nginx/ingress-nginx-controller'];

interface AuditJson {
  ingresses: number;
  annotations: { name: string; status: string; ingresses: number; examples: string[]; note: string }[];
  configMap?: string;
  configMapKeys: { key: string; status: string }[];
  ingressesWithErrors: { namespace: string; name: string; outcome: string; errors: { code: string; file: string | null; line: number | null }[] }[];
}

async function auditJson(args: readonly string[] = []): Promise<{ exitCode: number; report: AuditJson }> {
  const result = await runCli(['audit', '-f', fixture, ...configMap, '--format', 'json', ...args]);
  expect(result.stderr).toBe('');
  return { exitCode: result.exitCode, report: JSON.parse(result.stdout) as AuditJson };
}

function ingress(name: string, annotations: Record<string, string>): string {
  const lines = Object.entries(annotations).map(([key, value]) => `    nginx.ingress.kubernetes.io/${key}: "${value}"`);
  return [
    'apiVersion: networking.k8s.io/v1',
    'kind: Ingress',
    'metadata:',
    `  name: ${name}`,
    '  namespace: web',
    ...(lines.length > 0 ? ['  annotations:', ...lines] : []),
    'spec:',
    '  ingressClassName: nginx',
    '  rules:',
    `  - host: ${name}.example.test`,
    '    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}]}',
  ].join('\n');
}

const service = 'apiVersion: v1\nkind: Service\nmetadata: {name: app, namespace: web}\nspec: {clusterIP: 10.96.0.10, ports: [{port: 80}]}';

describe('audit', () => {
  it('counts every annotation in use with its status and what ingress2nginx does, refused first', async () => {
    const { report } = await auditJson();
    expect(report.ingresses).toBe(10);
    const byName = Object.fromEntries(report.annotations.map((a) => [a.name, a]));
    expect(byName['configuration-snippet']).toMatchObject({ status: 'refused', ingresses: 1, examples: ['web/legacy'] });
    expect(byName['rewrite-targt']).toMatchObject({ status: 'unknown', ingresses: 1 });
    expect(byName['affinity']?.status).toBe('differs');
    expect(byName['affinity']?.note).toContain('hash … consistent');
    expect(byName['use-regex']).toMatchObject({ status: 'differs', ingresses: 2, examples: ['other/guest', 'web/api'] });
    expect(byName['canary']).toMatchObject({ status: 'differs', ingresses: 2 });
    expect(byName['proxy-body-size']).toMatchObject({ status: 'supported', ingresses: 1 });
    expect(report.annotations[0]?.status).toBe('refused');
    expect(report.annotations.at(-1)?.status).toBe('supported');
  });

  it('names the ConfigMap keys in use and what happens to them', async () => {
    const { report } = await auditJson();
    expect(report.configMap).toBe('ingress-nginx/ingress-nginx-controller');
    expect(Object.fromEntries(report.configMapKeys.map((k) => [k.key, k.status]))).toMatchObject({
      'proxy-body-size': 'supported',
      'compute-full-forwarded-for': 'differs',
      'use-gzip': 'supported',
    });
  });

  it('lists the Ingresses that would be left out, with the errors that say why and where', async () => {
    const { exitCode, report } = await auditJson();
    expect(report.ingressesWithErrors.map((i) => [`${i.namespace}/${i.name}`, i.outcome])).toEqual([
      ['web/bad-canary', 'left-out'],
      ['web/legacy', 'left-out'],
    ]);
    expect(report.ingressesWithErrors[1]?.errors.map((e) => e.code).sort()).toEqual(['ingress-skipped', 'snippet-refused']);
    expect(report.ingressesWithErrors[1]?.errors.every((e) => e.file === 'fixtures/annotations/input/annotations.yaml' && e.line !== null)).toBe(true);
    expect(exitCode).toBe(1);
  });

  it('prints a text report and a markdown table for a pull request', async () => {
    const text = await runCli(['audit', '-f', fixture, ...configMap]);
    expect(text.stdout).toMatch(/^ingress2nginx audit: 10 Ingress\(es\) of our class: 2 would be left out, 0 served with errors, 8 served as written$/m);
    expect(text.stdout).toMatch(/^ {2}configuration-snippet +1 Ingress\(es\) {2}REFUSED$/m);
    expect(text.stdout).toContain('Ingresses not served as written (fix these before you switch):');
    const markdown = await runCli(['audit', '-f', fixture, ...configMap, '--format', 'markdown']);
    expect(markdown.stdout).toContain('| annotation | Ingresses | status | what ingress2nginx does |');
    expect(markdown.stdout).toMatch(/^\| `use-regex` \| 2 \| differs \| .+ \|$/m);
    expect(markdown.stdout).toContain('## Ingresses not served as written');
    expect(markdown.exitCode).toBe(1);
  });

  it('exits 0 when every Ingress is served as written; with --strict, 1 when an annotation is ignored', async () => {
    const input = [service, ingress('fine', { 'proxy-read-timeout': '30' }), ingress('sticky', { 'upstream-hash-by-subset': 'true' })].join('\n---\n');
    const relaxed = await runCli(['audit', '-f', '-'], { stdin: input });
    expect(relaxed.exitCode).toBe(0);
    expect(relaxed.stdout).toContain('2 Ingress(es) of our class: 0 would be left out, 0 served with errors, 2 served as written');
    expect((await runCli(['audit', '-f', '-', '--strict'], { stdin: input })).exitCode).toBe(1);
    expect((await runCli(['audit', '-f', '-', '--strict'], { stdin: [service, ingress('fine', { 'proxy-read-timeout': '30' })].join('\n---\n') })).exitCode).toBe(0);
  });

  it('exits 2 on a usage error', async () => {
    const result = await runCli(['audit', '-f', fixture, '--format', 'html']);
    expect(result.exitCode).toBe(2);
  });
});
