import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { testNowText } from '../support/options.js';

/**
 * `diff --base-manifests` flags a change that lets more through as a risky change (exit 1), where it
 * used to say "No route changes." and exit 0: each case of the hostile-tenant report.
 */

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ingress2nginx-widening-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function manifests(annotations: Record<string, string>): string {
  const lines = Object.entries(annotations).map(([key, value]) => `    nginx.ingress.kubernetes.io/${key}: ${JSON.stringify(value)}`);
  return `apiVersion: v1
kind: Service
metadata: {name: app, namespace: web}
spec: {clusterIP: 10.96.9.10, ports: [{name: p, port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: admin
  namespace: web
  annotations:
${lines.join('\n')}
spec:
  ingressClassName: nginx
  rules:
    - host: admin.example.test
      http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}]}
`;
}

const base = {
  'whitelist-source-range': '10.0.0.0/8',
  'denylist-source-range': '10.66.0.0/16, 10.99.0.0/16',
  'auth-tls-secret': 'web/client-ca',
  'auth-tls-verify-client': 'on',
  'auth-url': 'http://auth.sso.svc.cluster.local/check',
  'auth-type': 'basic',
  'auth-secret': 'web/admins',
};

describe('diff --base-manifests: widened access control is a risky change', () => {
  it.each([
    ['allow-list widened to everyone', { 'whitelist-source-range': '0.0.0.0/0,::/0' }, 'whitelist-source-range admits 0.0.0.0/0, ::/0 now'],
    ['client-certificate verification relaxed', { 'auth-tls-verify-client': 'optional_no_ca' }, 'auth-tls-verify-client is relaxed from "on" to "optional_no_ca"'],
    ['auth-url swapped', { 'auth-url': 'http://auth.attacker.svc.cluster.local/check' }, 'auth-url changed: another service decides who gets in'],
    ['auth-secret swapped', { 'auth-secret': 'web/everyone' }, 'auth-secret changed: another set of users gets in'],
    ['deny-list narrowed', { 'denylist-source-range': '10.66.0.0/16' }, 'denylist-source-range no longer denies 10.99.0.0/16'],
  ])('%s', async (name, change, message) => {
    const dir = join(work, name.replaceAll(' ', '-'));
    await mkdir(join(dir, 'base'), { recursive: true });
    await mkdir(join(dir, 'new'));
    await writeFile(join(dir, 'base', 'm.yaml'), manifests(base));
    await writeFile(join(dir, 'new', 'm.yaml'), manifests({ ...base, ...change }));
    const result = await runCli(['diff', '-f', join(dir, 'new'), '--base-manifests', join(dir, 'base'), '--now', testNowText, '--format', 'json']);
    expect(result.exitCode).toBe(1);
    const risky = (JSON.parse(result.stdout) as { risky: { rule: string; message: string; resource: { line: number } | null }[] }).risky;
    expect(risky.map((r) => r.rule)).toEqual(['access-control-widened']);
    expect(risky[0]!.message).toContain(message);
    // It points at the annotation's line.
    expect(risky[0]!.resource?.line).toBeGreaterThan(11);
    const text = await runCli(['diff', '-f', join(dir, 'new'), '--base-manifests', join(dir, 'base'), '--now', testNowText]);
    expect(text.stdout).toMatch(/^Risky changes \(1\):\n {2}\[access-control-widened\]/);
  });
});
