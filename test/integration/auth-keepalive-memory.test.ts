import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { nginxCheckCost } from '../../bench/nginx-check-cost.js';
import { build } from '../../src/build/build.js';
import { readInputs } from '../../src/sources/files.js';
import { authKeepalivePerNamespace } from '../../src/translate/dataplane/auth-keepalive.js';
import { requireNginx } from '../support/nginx.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * `auth-keepalive` cannot multiply nginx's memory (issue 37, defect 6): 300 Ingresses of one tenant
 * asking for 10,000 kept connections to their auth Service, each with its own timeout, made 300 upstream
 * blocks whose connection caches nginx allocates at load (468 MB for `nginx -t`). Their namespace's
 * blocks now share one budget; `nginx -t` on the real nginx stays small.
 */

const ingresses = 300;

async function tenantBuild() {
  const dir = await mkdtemp(join(tmpdir(), 'i2n-auth-keepalive-'));
  const documents = [
    stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'auth', namespace: 'team' }, spec: { clusterIP: '10.96.0.20', ports: [{ port: 80 }] } }),
    stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'team' }, spec: { clusterIP: '10.96.0.21', ports: [{ port: 80 }] } }),
    ...Array.from({ length: ingresses }, (_, i) =>
      stringify({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: {
          name: `app-${i}`,
          namespace: 'team',
          annotations: {
            'nginx.ingress.kubernetes.io/auth-url': 'http://auth.team.svc.cluster.local/check',
            'nginx.ingress.kubernetes.io/auth-keepalive': '10000',
            'nginx.ingress.kubernetes.io/auth-keepalive-timeout': String(i + 1),
          },
        },
        spec: { ingressClassName: 'nginx', rules: [{ host: `app-${i}.team.example.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
      }),
    ),
  ];
  const file = join(dir, 'team.yaml');
  await writeFile(file, documents.join('---\n'));
  const runDir = join(dir, 'run');
  const { snapshot } = await readInputs([file]);
  const nginx = requireNginx();
  const options = testTranslateOptions({ runDir, nginxVersion: nginx.version, ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }) });
  return { result: build(snapshot, options), runDir };
}

describe('auth-keepalive blocks of one namespace', () => {
  it('keep at most the namespace budget together, and nginx -t stays under 150 MB', async () => {
    const { result, runDir } = await tenantBuild();
    const authBlocks = result.model.http.upstreams.filter((upstream) => upstream.name.includes('auth-keepalive'));
    expect(authBlocks).toHaveLength(ingresses);
    expect(authBlocks.reduce((sum, upstream) => sum + (upstream.keepalive ?? 0), 0)).toBeLessThanOrEqual(authKeepalivePerNamespace);
    const cost = await nginxCheckCost(result.files, runDir, requireNginx().binary);
    console.log(`auth-keepalive: ${ingresses} blocks, nginx -t peak RSS ${(cost.peakRss / 1048576).toFixed(0)} MB`);
    expect(cost.output).not.toMatch(/emerg/);
    expect(cost.ok).toBe(true);
    expect(cost.peakRss).toBeLessThan(150 * 1024 * 1024);
  });
});
