import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildResult } from './build.js';
import { readInputs } from '../sources/files.js';
import type { Snapshot } from '../sources/snapshot.js';
import type { TranslateOptions } from '../translate/options.js';
import { requireNginx } from '../../test/support/nginx.js';
import { createCa, issueCertificate, type CertificateFiles } from '../../test/support/pki.js';
import { manifestsText, numberedSites, tlsSecret, writePoisonNginx, type Site } from '../../test/support/tenants.js';
import { caSecretManifest } from '../../test/support/pki.js';
import { checkConfig } from '../apply/check.js';
import { buildChecked, nginxMessage, searchesPerNamespace, type BuildCheck } from './quarantine.js';
import { testTranslateOptions } from '../../test/support/options.js';

/**
 * buildChecked against the real `nginx -t`, behind a stand-in that rejects configs carrying a poison
 * marker (test/support/tenants.ts): a failure the allow-lists let through, on purpose.
 */

let scratch: string;
let poisonNginx: string;
let options: TranslateOptions;
let wildcard: CertificateFiles;

beforeAll(async () => {
  const nginx = requireNginx();
  scratch = await mkdtemp(join(tmpdir(), 'ingress2nginx-quarantine-'));
  poisonNginx = (await writePoisonNginx(scratch, nginx.binary)).binary;
  options = testTranslateOptions({
    runDir: join(scratch, 'run'),
    ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }),
  });
  const ca = await createCa(scratch, 'quarantine CA');
  wildcard = await issueCertificate(ca, { commonName: '*.example.com', sans: ['*.example.com'] });
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let checks = 0;
/** Each build's files in a folder of their own, checked there; counts the checks. */
function poisonCheck(): { check: BuildCheck; count: () => number } {
  let count = 0;
  const check: BuildCheck = async (result: BuildResult) => {
    count++;
    const dir = join(scratch, `check-${++checks}`);
    for (const file of result.files) {
      await mkdir(dirname(join(dir, file.path)), { recursive: true });
      await writeFile(join(dir, file.path), file.contents, { mode: file.mode });
    }
    try {
      return await checkConfig(dir, options.runDir, poisonNginx);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  return { check, count: () => count };
}

let inputs = 0;
async function snapshotOf(text: string): Promise<Snapshot> {
  const file = join(scratch, `input-${++inputs}.yaml`);
  await writeFile(file, text);
  return (await readInputs([file])).snapshot;
}

function nginxConf(result: BuildResult): string {
  return result.files.find((f) => f.path === 'nginx.conf')?.contents ?? '';
}

describe('buildChecked', () => {
  it('leaves out the one bad Ingress among 200 with nginx\'s words, keeps the other 199, in a bounded number of checks', async () => {
    const sites = numberedSites(200, [137]);
    const { check, count } = poisonCheck();
    const checked = await buildChecked(await snapshotOf(manifestsText(sites)), options, check);

    expect(checked.check.ok).toBe(true);
    expect([...checked.quarantined.keys()]).toEqual(['Ingress/web/ing-site-137']);
    expect(checked.quarantined.get('Ingress/web/ing-site-137')).toBe('[emerg] unknown directive "poison-137.example.com"');
    const conf = nginxConf(checked.result);
    expect(conf).not.toContain('poison');
    for (const site of sites.filter((s) => s.name !== 'site-137')) expect(conf).toContain(`server_name ${site.host};`);
    expect(checked.result.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        code: 'nginx-rejected',
        resource: expect.objectContaining({ kind: 'Ingress', namespace: 'web', name: 'ing-site-137' }),
        message: expect.stringContaining('unknown directive "poison-137.example.com"'),
      }),
    );
    // 400 candidates (200 Ingresses, 200 Services): the full build, the build with none of them,
    // ceil(log2 400) = 9 probes at most, and the final build.
    console.log(`nginx -t runs for one culprit among 200 Ingresses (400 candidates): ${count()}`);
    expect(count()).toBeLessThanOrEqual(12);
  });

  it('leaves out two independent bad Ingresses, each with its own message', async () => {
    const { check } = poisonCheck();
    const checked = await buildChecked(await snapshotOf(manifestsText(numberedSites(40, [3, 31]))), options, check);

    expect(checked.check.ok).toBe(true);
    expect(Object.fromEntries(checked.quarantined)).toEqual({
      'Ingress/web/ing-site-3': '[emerg] unknown directive "poison-3.example.com"',
      'Ingress/web/ing-site-31': '[emerg] unknown directive "poison-31.example.com"',
    });
    expect(nginxConf(checked.result)).toContain('server_name site-4.example.com;');
  });

  it('leaves out one of two Ingresses that fail only together: the later in name order', async () => {
    const sites: Site[] = [
      ...numberedSites(10),
      { name: 'pair-a', host: 'pair-a.example.com' },
      { name: 'pair-b', host: 'pair-b.example.com' },
    ];
    const { check } = poisonCheck();
    const checked = await buildChecked(await snapshotOf(manifestsText(sites)), options, check);

    expect(checked.check.ok).toBe(true);
    expect(Object.fromEntries(checked.quarantined)).toEqual({
      'Ingress/web/ing-pair-b': '[emerg] pair-a and pair-b cannot be served together',
    });
    expect(nginxConf(checked.result)).toContain('server_name pair-a.example.com;');
  });

  it('blames a bad Secret, not the Ingress that uses it; the host stays, with the default certificate', async () => {
    const sites: Site[] = [
      ...numberedSites(10).map((site) => ({ ...site, secret: `tls-${site.name}` })),
      { name: 'shop', host: 'shop.example.com', secret: 'poison-tls' },
    ];
    const secrets = [...sites.map((site) => tlsSecret(site.secret as string, wildcard))];
    const { check } = poisonCheck();
    const checked = await buildChecked(await snapshotOf(manifestsText(sites, secrets)), options, check);

    expect(checked.check.ok).toBe(true);
    expect(Object.fromEntries(checked.quarantined)).toEqual({
      'Secret/web/poison-tls': '[emerg] unknown directive "tls/web_poison-tls.pem"',
    });
    const conf = nginxConf(checked.result);
    expect(conf).toContain('server_name shop.example.com;');
    expect(conf).toContain('ssl_certificate tls/web_tls-site-1.pem;');
    expect(checked.result.files.map((f) => f.path)).not.toContain('tls/web_poison-tls.pem');
  });

  it('blames a bad TLSRoute, not the Gateway it attaches to', async () => {
    const route = (name: string, host: string) => `apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: ${name}, namespace: edge}
spec:
  parentRefs: [{name: tls-gw}]
  hostnames: ["${host}"]
  rules: [{backendRefs: [{name: vault, port: 8200}]}]
`;
    const text = [
      'apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: ingress2nginx}\nspec: {controllerName: ingress2nginx.dev/controller}\n',
      'apiVersion: v1\nkind: Service\nmetadata: {name: vault, namespace: edge}\nspec: {clusterIP: 10.97.0.10, ports: [{name: https, port: 8200}]}\n',
      `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: tls-gw, namespace: edge}
spec:
  gatewayClassName: ingress2nginx
  listeners: [{name: passthrough, port: 443, protocol: TLS, hostname: "*.example.test", tls: {mode: Passthrough}}]
`,
      route('alpha', 'alpha.example.test'),
      route('bad', 'poison-bad.example.test'),
      route('omega', 'omega.example.test'),
    ].join('---\n');
    const { check } = poisonCheck();
    const checked = await buildChecked(await snapshotOf(text), options, check);

    expect(checked.check.ok).toBe(true);
    expect([...checked.quarantined.keys()]).toEqual(['TLSRoute/edge/bad']);
    const conf = nginxConf(checked.result);
    expect(conf).toContain('alpha.example.test');
    expect(conf).toContain('omega.example.test');
  });

  it('returns a failure that no tenant resource causes as it is, after two checks', async () => {
    const { check, count } = poisonCheck();
    const snapshot = await snapshotOf(manifestsText(numberedSites(20)));
    const checked = await buildChecked(snapshot, { ...options, streamModulePath: '/nonexistent/ngx_stream_module.so' }, check);

    expect(checked.check.ok).toBe(false);
    expect(checked.check.output).toContain('dlopen() "/nonexistent/ngx_stream_module.so" failed');
    expect(checked.quarantined.size).toBe(0);
    expect(checked.result.diagnostics.filter((d) => d.code === 'nginx-rejected')).toEqual([]);
    expect(count()).toBe(2);
  });

  it('finds the same culprits and builds the same bytes whatever the input order', async () => {
    const sites: Site[] = [
      ...numberedSites(30, [7, 22]).map((site, i) => (i % 3 === 0 ? { ...site, secret: `tls-${site.name}` } : site)),
      { name: 'pair-a', host: 'pair-a.example.com' },
      { name: 'pair-b', host: 'pair-b.example.com' },
    ];
    const secrets = sites.filter((s) => s.secret !== undefined).map((s) => tlsSecret(s.secret as string, wildcard));
    const documents = manifestsText(sites, secrets).split('---\n');
    const reversed = [...documents].reverse();
    const interleaved = [...documents.filter((_, i) => i % 2 === 1), ...documents.filter((_, i) => i % 2 === 0)];

    const results = [];
    for (const order of [documents, reversed, interleaved]) {
      results.push(await buildChecked(await snapshotOf(order.join('---\n')), options, poisonCheck().check));
    }
    const [first, ...others] = results.map((r) => ({
      ok: r.check.ok,
      quarantined: [...r.quarantined],
      files: r.result.files,
    }));
    expect(first?.quarantined.map(([id]) => id)).toEqual(['Ingress/web/ing-pair-b', 'Ingress/web/ing-site-22', 'Ingress/web/ing-site-7']);
    for (const other of others) expect(other).toEqual(first);
  });
});

describe('buildChecked: blame follows ownership, and no tenant can fill it', () => {
  it('has no ceiling: 20 bad Ingresses of one tenant are left out without freezing the config or costing the others their search', async () => {
    const evil: Site[] = Array.from({ length: 25 }, (_, i) => ({
      name: `evil-${String(i).padStart(2, '0')}`,
      namespace: 'evil',
      host: i < 20 ? `poison-e${i}.example.com` : `fine-e${i}.example.com`,
    }));
    const web = numberedSites(30, [12]);
    const { check, count } = poisonCheck();
    const checked = await buildChecked(await snapshotOf(manifestsText([...web, ...evil])), options, check);

    expect(checked.check.ok).toBe(true);
    expect(checked.quarantined.get('Ingress/web/ing-site-12')).toBe('[emerg] unknown directive "poison-12.example.com"');
    const conf = nginxConf(checked.result);
    for (const site of web.filter((s) => s.name !== 'site-12')) expect(conf).toContain(`server_name ${site.host};`);
    expect(conf).not.toContain('poison');
    const evilLeftOut = [...checked.quarantined.keys()].filter((id) => id.startsWith('Ingress/evil/'));
    const searched = evilLeftOut.filter((id) => !checked.quarantined.get(id)!.startsWith('not checked'));
    expect(searched).toHaveLength(searchesPerNamespace + 1);
    expect(evilLeftOut.length).toBeGreaterThanOrEqual(20);
    // Found one by one: web's culprit and evil's first nine, each in at most 1 + ceil(log2 110) checks.
    console.log(`nginx -t runs for 21 culprits among 110 candidates, 20 of one tenant: ${count()}`);
    expect(count()).toBeLessThanOrEqual(2 + (searchesPerNamespace + 2) * 9);

    // The next round (the cluster mode passes what it left out): the unchecked are checked again, the
    // culprits found stay out, and the search goes on from there, bounded the same way.
    const again = await buildChecked(await snapshotOf(manifestsText([...web, ...evil])), { ...options, quarantine: checked.quarantined }, poisonCheck().check);
    expect(again.check.ok).toBe(true);
    const searchedAgain = [...again.quarantined].filter(([id, message]) => id.startsWith('Ingress/evil/') && !message.startsWith('not checked'));
    expect(searchedAgain.length).toBe(Math.min(20, 2 * (searchesPerNamespace + 1)));
    expect(nginxConf(again.result)).not.toContain('poison');
  });

  it('blames the canary whose header pattern fails, not the main Ingress it splits', async () => {
    const sites: Site[] = [
      ...numberedSites(6),
      { name: 'z-main', host: 'shop.example.com' },
      {
        name: 'a-canary',
        host: 'shop.example.com',
        annotations: { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-by-header': 'X-Beta', 'nginx.ingress.kubernetes.io/canary-by-header-pattern': 'poison-pattern' },
      },
    ];
    const checked = await buildChecked(await snapshotOf(manifestsText(sites)), options, poisonCheck().check);

    expect(checked.check.ok).toBe(true);
    expect([...checked.quarantined.keys()]).toEqual(['Ingress/web/ing-a-canary']);
    expect(nginxConf(checked.result)).toContain('server_name shop.example.com;');
  });

  it('blames the Ingress whose auth-tls-match-cn fails, not the CA Secret other Ingresses share', async () => {
    const clientAuth = (matchCn: string) => ({
      'nginx.ingress.kubernetes.io/auth-tls-secret': 'web/client-ca',
      'nginx.ingress.kubernetes.io/auth-tls-match-cn': matchCn,
    });
    const sites: Site[] = [
      { name: 'alpha', host: 'alpha.example.com', secret: 'tls-alpha', annotations: clientAuth('CN=alice') },
      { name: 'beta', host: 'beta.example.com', secret: 'tls-beta', annotations: clientAuth('CN=poison-cn') },
    ];
    const secrets = [tlsSecret('tls-alpha', wildcard), tlsSecret('tls-beta', wildcard), caSecretManifest({ name: 'client-ca', namespace: 'web', caPem: wildcard.certPem })];
    const checked = await buildChecked(await snapshotOf(manifestsText(sites, secrets)), options, poisonCheck().check);

    expect(checked.check.ok).toBe(true);
    expect([...checked.quarantined.keys()]).toEqual(['Ingress/web/ing-beta']);
    const conf = nginxConf(checked.result);
    expect(conf).toContain('server_name alpha.example.com;');
    expect(conf).toContain('ca/web_client-ca.crt');
  });

  it('never blames what nginx serves now for a newcomer it fails with, however old the newcomer is', async () => {
    const sites: Site[] = [
      ...numberedSites(4),
      { name: 'pair-a', host: 'pair-a.example.com', created: '2025-06-01T00:00:00Z' },
      { name: 'pair-b', host: 'pair-b.example.com', created: '2024-01-01T00:00:00Z' },
    ];
    const snapshot = await snapshotOf(manifestsText(sites));
    const byAge = await buildChecked(snapshot, options, poisonCheck().check);
    expect([...byAge.quarantined.keys()]).toEqual(['Ingress/web/ing-pair-a']);
    const byService = await buildChecked(snapshot, options, poisonCheck().check, undefined, new Set(['Ingress/web/ing-pair-a']));
    expect([...byService.quarantined.keys()]).toEqual(['Ingress/web/ing-pair-b']);
  });
});

describe('nginxMessage', () => {
  it('keeps the [emerg] line without time stamp, process id or the throw-away file and line', () => {
    const output = [
      'nginx: [warn] the "user" directive makes sense only if the master process runs with super-user privileges',
      '2026/11/30 11:36:43 [emerg] 10294#10294: host not found in upstream "svc.web.svc.cluster.local:80" in /tmp/x/.i2n-staging-0a1b/nginx.conf:71',
      'nginx: configuration file /tmp/x/.i2n-staging-0a1b/nginx.conf test failed',
    ].join('\n');
    expect(nginxMessage(output)).toBe('[emerg] host not found in upstream "svc.web.svc.cluster.local:80"');
    expect(nginxMessage('nginx: [emerg] dlopen() "/x.so" failed (/x.so: cannot open shared object file) in /o/nginx.conf:2')).toBe(
      '[emerg] dlopen() "/x.so" failed (/x.so: cannot open shared object file)',
    );
  });
});
