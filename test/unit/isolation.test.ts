import { mkdtemp } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import type { SniRoute } from '../../src/model/nginx.js';
import { build } from '../../src/build/build.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { translate } from '../../src/translate/translate.js';
import { configMap, gateway, object, passthrough, service, tlsRoute } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';
import { createCa } from '../support/pki.js';
import { upstreamName } from '../../src/translate/upstream-names.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkBuiltFiles, requireNginx } from '../support/nginx.js';

/**
 * Tenant isolation at the model level: no resource takes a host from an older claim, whatever the
 * modes, and every merge or takeover across resources is reported on both sides.
 */

const options: TranslateOptions = testTranslateOptions();

const older = '2024-01-01T00:00:00Z';
const newer = '2025-01-01T00:00:00Z';

interface IngressSpec {
  readonly hosts: readonly string[];
  readonly tls?: boolean;
  readonly passthrough?: boolean;
  readonly paths?: readonly string[];
  readonly created?: string;
  readonly annotations?: Record<string, string>;
  readonly pathType?: 'Exact' | 'Prefix' | 'ImplementationSpecific';
}

function ingress(namespace: string, name: string, spec: IngressSpec): SourceObject {
  const annotations = { ...(spec.passthrough && { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' }), ...spec.annotations };
  const backend = { service: { name: 'web', port: { number: 80 } } };
  const base = object('networking.k8s.io/v1', 'Ingress', namespace, name, {
    spec: {
      ingressClassName: 'nginx',
      ...(spec.tls && { tls: [{ hosts: spec.hosts }] }),
      rules: spec.hosts.map((host) => ({
        host,
        http: { paths: (spec.paths ?? ['/']).map((path) => ({ path, pathType: path === '/' ? 'Prefix' : (spec.pathType ?? 'Prefix'), backend })) },
      })),
    },
  }, { creationTimestamp: spec.created ?? older });
  return { ...base, metadata: { ...base.metadata, annotations } };
}

const services = (...namespaces: string[]) => namespaces.map((ns) => service(ns, 'web', '10.96.0.1', [{ port: 80 }, { port: 443 }]));

function run(objects: readonly SourceObject[], extra: Partial<TranslateOptions> = {}) {
  return translate({ objects }, { ...options, ...extra });
}

function sniMap(objects: readonly SourceObject[], extra: Partial<TranslateOptions> = {}): Record<string, string> {
  const front = run(objects, extra).model.stream.frontends.find((f) => f.port === 443);
  return Object.fromEntries((front?.routes ?? []).map((r: SniRoute) => [r.serverName, r.target]));
}

function about(diagnostics: readonly Diagnostic[], code: string): string[] {
  return diagnostics.filter((d) => d.code === code).map((d) => `${d.resource?.namespace}/${d.resource?.name}`).sort();
}

describe('passthrough and termination: the oldest claim decides the mode', () => {
  it('a newer passthrough in another namespace does not take a host an older Ingress terminates', () => {
    const { model, diagnostics } = run([
      ...services('team-a', 'team-b'),
      ingress('team-a', 'shop', { hosts: ['app.example.test'], tls: true, created: older }),
      ingress('team-b', 'grab', { hosts: ['app.example.test'], passthrough: true, created: newer }),
    ]);
    expect(model.stream.frontends[0]?.routes ?? []).toEqual([]);
    expect(model.stream.passthroughServers).toEqual([]);
    const host = model.http.virtualHosts.find((h) => h.serverName === 'app.example.test')!;
    expect(host.tls).toBeDefined();
    expect(host.locations.find((l) => l.path === '/')?.plainHttp.redirect).toBe(true);
    expect(about(diagnostics, 'passthrough-conflict')).toEqual(['team-b/grab']);
  });

  it('an older passthrough keeps its host against a newer spec.tls, which is told so', () => {
    const { model, diagnostics } = run([
      ...services('team-a', 'team-b'),
      ingress('team-a', 'tunnel', { hosts: ['app.example.test'], passthrough: true, created: older }),
      ingress('team-b', 'shop', { hosts: ['app.example.test'], tls: true, created: newer }),
    ]);
    expect(model.stream.frontends[0]?.routes.map((r) => r.serverName)).toEqual(['app.example.test']);
    expect(about(diagnostics, 'tls-shadowed-by-passthrough')).toEqual(['team-b/shop']);
  });

  it('a passthrough over a host another Ingress only routes: both are told, and no redirect is implied', () => {
    const { model, diagnostics } = run([
      ...services('team-a', 'team-b'),
      ingress('team-a', 'plain', { hosts: ['app.example.test'], created: older }),
      ingress('team-b', 'tunnel', { hosts: ['app.example.test'], passthrough: true, created: newer }),
    ]);
    expect(about(diagnostics, 'host-tls-passed-through')).toEqual(['team-a/plain', 'team-b/tunnel']);
    const host = model.http.virtualHosts.find((h) => h.serverName === 'app.example.test')!;
    expect(host.locations.find((l) => l.path === '/')?.plainHttp).toEqual({ redirect: false, serve: true });
  });
});

describe('a wildcard passthrough never takes a terminated name under it', () => {
  const label = (length: number) => 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(2).slice(0, length);
  const lengths = [1, 2, 3, 62, 63];

  it.each(lengths)('first label of %i characters', (length) => {
    const name = `${label(length)}.example.test`;
    const map = sniMap([
      ...services('team-a', 'team-b'),
      ingress('team-a', 'site', { hosts: [name], tls: true }),
      ingress('team-b', 'wild', { hosts: ['*.example.test'], passthrough: true }),
    ]);
    expect(map[name]).toBe('unix:/run/i2n/https-443.sock');
    expect(map['*.example.test']).toMatch(/passthrough-/);
  });

  it('every first-label length from 1 to 63, and names several labels deeper', () => {
    const names = [...Array.from({ length: 63 }, (_, i) => `${label(i + 1)}.example.test`), 'a.b.example.test', 'x.y.z.example.test'];
    const map = sniMap([
      ...services('team-a', 'team-b'),
      ingress('team-a', 'site', { hosts: names }),
      ingress('team-b', 'wild', { hosts: ['*.example.test'], passthrough: true }),
    ]);
    for (const name of names) expect(map[name], name).toBe('unix:/run/i2n/https-443.sock');
  });

  it('a terminated wildcard under a broader passthrough wildcard keeps its names', () => {
    const map = sniMap([
      ...services('team-a', 'team-b'),
      ingress('team-a', 'site', { hosts: ['*.a.example.test'], tls: true }),
      ingress('team-b', 'wild', { hosts: ['*.example.test'], passthrough: true }),
    ]);
    expect(map['*.a.example.test']).toBe('unix:/run/i2n/https-443.sock');
  });

  it('adds no entry for names the wildcard does not cover', () => {
    const map = sniMap([
      ...services('team-a', 'team-b'),
      ingress('team-a', 'site', { hosts: ['example.test', 'aexample.test', 'a.other.test'], tls: true }),
      ingress('team-b', 'wild', { hosts: ['*.example.test'], passthrough: true }),
    ]);
    expect(Object.keys(map)).toEqual(['*.example.test']);
  });
});

describe('TLSRoute and Ingress on one name', () => {
  const gatewayObjects = [gateway('infra', 'gw', [passthrough('tls', 443, undefined, { allowedRoutes: { namespaces: { from: 'All' } } })])];
  const route = (created: string) =>
    tlsRoute('team-b', 'grab', { hostnames: ['app.example.test'], backendRefs: [{ name: 'web', port: 443 }] }, { creationTimestamp: created });

  it('a newer TLSRoute does not take an older Ingress host that has no spec.tls; both are told', () => {
    const { diagnostics } = run([...gatewayObjects, ...services('team-a', 'team-b'), ingress('team-a', 'plain', { hosts: ['app.example.test'], created: older }), route(newer)]);
    expect(sniMap([...gatewayObjects, ...services('team-a', 'team-b'), ingress('team-a', 'plain', { hosts: ['app.example.test'], created: older }), route(newer)])).toEqual({});
    expect(about(diagnostics, 'sni-conflict')).toEqual(['team-a/plain', 'team-b/grab']);
  });

  it('an older TLSRoute keeps the name; the newer Ingress is told it gets plain HTTP only', () => {
    const objects = [...gatewayObjects, ...services('team-a', 'team-b'), ingress('team-a', 'plain', { hosts: ['app.example.test'], created: newer }), route(older)];
    expect(Object.keys(sniMap(objects))).toEqual(['app.example.test']);
    const ingressSide = run(objects).diagnostics.find((d) => d.code === 'sni-conflict' && d.resource?.kind === 'Ingress');
    expect(ingressSide?.message).toContain('plain HTTP only');
  });
});

describe('hosts shared across namespaces', () => {
  it('tells both sides when another namespace adds paths to a host, and names the ACME challenge', () => {
    const { diagnostics } = run([
      ...services('team-a', 'team-b'),
      ingress('team-a', 'shop', { hosts: ['app.example.test'], tls: true, paths: ['/shop'], created: older }),
      ingress('team-b', 'extra', { hosts: ['app.example.test'], paths: ['/.well-known/acme-challenge'], created: newer }),
    ]);
    const shared = diagnostics.filter((d) => d.code === 'host-shared-across-namespaces');
    expect(shared.map((d) => `${d.resource?.namespace}/${d.resource?.name}`).sort()).toEqual(['team-a/shop', 'team-b/extra']);
    for (const d of shared) expect(d.message).toContain('ACME HTTP-01');
  });

  it('says nothing when one namespace splits a host over several Ingresses', () => {
    const { diagnostics } = run([
      ...services('team-a'),
      ingress('team-a', 'shop', { hosts: ['app.example.test'], paths: ['/shop'], created: older }),
      ingress('team-a', 'api', { hosts: ['app.example.test'], paths: ['/api'], created: newer }),
    ]);
    expect(diagnostics).toEqual([]);
  });

  const contested = [
    ...services('team-a', 'team-b'),
    gateway('infra', 'gw', [passthrough('tls', 443, undefined, { allowedRoutes: { namespaces: { from: 'All' } } })]),
    ingress('team-a', 'shop', { hosts: ['app.example.test', 'other.example.test'], paths: ['/shop'], created: older }),
    ingress('team-b', 'extra', { hosts: ['app.example.test'], paths: ['/.well-known/acme-challenge', '/extra'], created: newer }),
    ingress('team-b', 'tunnel', { hosts: ['other.example.test'], passthrough: true, created: newer }),
    tlsRoute('team-b', 'grab', { hostnames: ['app.example.test'], backendRefs: [{ name: 'web', port: 443 }] }, { creationTimestamp: newer }),
  ];

  it.each([
    ['the flag', { firstNamespaceOwnsHost: true }, []],
    ['the ConfigMap key', { configMap: 'infra/controller' }, [configMap('infra', 'controller', { 'first-namespace-owns-host': 'true' })]],
  ])('first-namespace-owns-host (%s) refuses every claim from another namespace', (_, extra, more) => {
    const { model, diagnostics } = run([...contested, ...more], extra);
    const app = model.http.virtualHosts.find((h) => h.serverName === 'app.example.test')!;
    expect(app.locations.map((l) => l.path).filter((p) => p !== '/')).toEqual(['/shop', '/shop/']);
    expect(model.stream.frontends.flatMap((f) => f.routes)).toEqual([]);
    expect(about(diagnostics, 'host-owned-by-namespace')).toEqual(['team-b/extra', 'team-b/grab', 'team-b/tunnel']);
  });

  it('without the rule, the same input merges with warnings', () => {
    const { model } = run(contested);
    const app = model.http.virtualHosts.find((h) => h.serverName === 'app.example.test')!;
    expect(app.locations.map((l) => l.path)).toContain('/extra/');
  });
});

describe('host names that are map parameters', () => {
  it.each(['default', 'include', 'hostnames', 'volatile'])('escapes %s as an SNI map key', (host) => {
    const result = build(
      { objects: [...services('team-a'), ingress('team-a', 'odd', { hosts: [host], passthrough: true })] },
      options,
    );
    const conf = result.files[0]!.contents;
    expect(conf).toContain(`        \\${host} unix:`);
    expect(conf).not.toMatch(new RegExp(`^\\s+${host} unix:\\S+passthrough`, "m"));
  });
});

describe('canary Ingresses', () => {
  const canaryAnnotations = { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-weight': '100' };

  const canaryRawBase = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'canary', namespace: 'team-a' } };

  it.each([
    ['an older canary', older, newer],
    ['a newer canary', newer, older],
  ])('%s never takes the main Ingress host or path: it only splits the main location', (_, canaryCreated, mainCreated) => {
    const { model, diagnostics } = run([
      ...services('team-a'),
      service('team-a', 'web-v2', '10.96.0.2', [{ port: 80 }]),
      ingress('team-a', 'main', { hosts: ['app.example.test'], created: mainCreated }),
      {
        ...ingress('team-a', 'canary', { hosts: ['app.example.test', 'only-canary.example.test'], created: canaryCreated, annotations: canaryAnnotations }),
        raw: { ...canaryRawBase, ...canaryRaw('web-v2', ['app.example.test', 'only-canary.example.test']) },
      },
    ]);
    expect(model.http.virtualHosts.map((h) => h.serverName)).toEqual(['app.example.test']);
    const root = model.http.virtualHosts[0]!.locations.find((l) => l.path === '/');
    expect(root?.comment).toContain('team-a/main');
    // canary-weight 100: every request goes to the canary, in the main Ingress's location.
    expect(root?.proxy?.pass).toBe(`http://${upstreamName('team-a_web-v2_80')}`);
    expect(root?.proxy?.canary?.upstream).toBe(upstreamName('team-a_web-v2_80'));
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(diagnostics.filter((d) => d.code === 'canary-without-main').map((d) => d.message)).toEqual([
      expect.stringContaining('host only-canary.example.test path / (Prefix)'),
    ]);
  });

  it('does not split another namespace\'s Ingress', () => {
    const { model, diagnostics } = run([
      ...services('team-a', 'team-b'),
      ingress('team-a', 'main', { hosts: ['app.example.test'] }),
      ingress('team-b', 'canary', { hosts: ['app.example.test'], annotations: canaryAnnotations }),
    ]);
    const root = model.http.virtualHosts[0]!.locations.find((l) => l.path === '/');
    expect(root?.proxy?.pass).toBe(`http://${upstreamName('team-a_web_80')}`);
    expect(root?.proxy?.canary).toBeUndefined();
    expect(about(diagnostics, 'canary-other-namespace')).toEqual(['team-b/canary']);
  });

  it('serves nothing without a main Ingress, and says so', () => {
    const { model, diagnostics } = run([...services('team-a'), ingress('team-a', 'canary', { hosts: ['app.example.test'], annotations: canaryAnnotations })]);
    expect(model.http.virtualHosts).toEqual([]);
    expect(about(diagnostics, 'canary-without-main')).toEqual(['team-a/canary']);
  });

  it('is left out when its canary value is not a boolean, rather than rendered as a main Ingress', () => {
    const { model, diagnostics } = run([
      ...services('team-a'),
      ingress('team-a', 'canary', { hosts: ['app.example.test'], annotations: { 'nginx.ingress.kubernetes.io/canary': 'yes please' } }),
    ]);
    expect(model.http.virtualHosts).toEqual([]);
    expect(about(diagnostics, 'canary-invalid')).toEqual(['team-a/canary']);
  });
});

/** The raw spec of a canary Ingress whose paths go to `serviceName` (the helper above always uses web). */
function canaryRaw(serviceName: string, hosts: readonly string[]): SourceObject['raw'] {
  return {
    spec: {
      ingressClassName: 'nginx',
      rules: hosts.map((host) => ({
        host,
        http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: serviceName, port: { number: 80 } } } }] },
      })),
    },
  };
}

/** nginx -t on the build of `objects`: the output of a real nginx, empty when it passes. */
async function nginxOutput(objects: readonly SourceObject[], extra: Partial<TranslateOptions> = {}): Promise<{ ok: boolean; output: string }> {
  const nginx = requireNginx();
  const runDir = join(tmpdir(), 'i2n-isolation-run');
  const result = build({ objects }, { ...options, ...extra, runDir, ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }) });
  return checkBuiltFiles(result.files, runDir);
}

describe('internal locations are out of every Ingress path\'s reach', () => {
  const victim = ingress('team-a', 'shop', {
    hosts: ['app.example.test'],
    created: older,
    annotations: { 'nginx.ingress.kubernetes.io/auth-url': 'http://10.0.0.7/check' },
  });
  const authPath = (objects: readonly SourceObject[]) =>
    run(objects).model.http.virtualHosts.flatMap((h) => h.locations).find((l) => l.authEndpoint)!.path;

  it.each(['Exact', 'Prefix', 'ImplementationSpecific'] as const)(
    'a newer tenant copying the victim\'s auth location as an %s path is refused; the victim keeps its host and nginx loads',
    async (pathType) => {
      const internal = authPath([...services('team-a'), victim]);
      expect(internal).toMatch(/^\/\.ingress2nginx\/auth\/[0-9a-f]+$/);
      const objects = [...services('team-a', 'team-b'), victim, ingress('team-b', 'copy', { hosts: ['app.example.test'], created: newer, paths: [internal, '/'], pathType })];
      const { model, diagnostics } = run(objects);
      expect(diagnostics.filter((d) => d.code === 'path-invalid').map((d) => `${d.resource?.namespace}/${d.resource?.name}`)).toEqual(['team-b/copy']);
      const host = model.http.virtualHosts.find((h) => h.serverName === 'app.example.test')!;
      expect(host.locations.find((l) => l.path === '/')?.comment).toContain('team-a/shop');
      expect(host.locations.filter((l) => l.path.startsWith('/.ingress2nginx')).map((l) => l.comment)).toEqual(['auth-url of Ingress team-a/shop']);
      expect(await nginxOutput(objects)).toMatchObject({ ok: true });
    },
  );
});

describe('auth-url never reaches a special address or another namespace\'s Service', () => {
  it.each([
    'http://127.0.0.1/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://0177.0.0.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::127.0.0.1]/',
    'http://[64:ff9b::7f00:1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[fd00:ec2::254]/',
    'http://[fd20:ce::254]/',
    'http://100.100.100.200/',
    'http://168.63.129.16/',
    'http://192.0.0.192/',
    'http://0.0.0.0/',
    'http://metadata.google.internal/',
    'http://169.254.169.254.nip.io/',
    'http://10-96-7-7.team-b.pod.cluster.local/',
    'http://pod-0.billing.team-b.svc.cluster.local/',
  ])('%s is refused, and the Ingress is left out', (url) => {
    const { model, diagnostics } = run(
      [...services('team-a'), ingress('team-a', 'sso', { hosts: ['app.example.test'], annotations: { 'nginx.ingress.kubernetes.io/auth-url': url } })],
      { resolvers: ['10.96.0.10'] },
    );
    expect(about(diagnostics, 'auth-url-unreachable')).toEqual(['team-a/sso']);
    expect(model.http.virtualHosts).toEqual([]);
  });

  it('puts only checked host names into the map that checks $host: a refused host never reaches nginx.conf', () => {
    const result = build(
      { objects: [...services('team-a'), ingress('team-a', 'sso', { hosts: ['app.example.test', 'x;pwned.example.test', '*.w.example.test'], annotations: { 'nginx.ingress.kubernetes.io/auth-url': 'https://$host/oauth2/auth' } })] },
      { ...options, resolvers: ['10.96.0.10'] },
    );
    const conf = result.files[0]!.contents;
    expect(conf).not.toContain('pwned');
    expect(conf).toMatch(/map \$host \$i2n_auth_host_\w+ \{\n        hostnames;\n        \*\.w\.example\.test \$host;\n        app\.example\.test \$host;\n        default "";/);
  });

  it('refuses the cluster IP of another namespace\'s Service, which no backend could name', () => {
    const { diagnostics } = run([
      ...services('team-a'),
      service('team-b', 'billing', '10.96.7.7', [{ port: 80 }]),
      ingress('team-a', 'sso', { hosts: ['app.example.test'], annotations: { 'nginx.ingress.kubernetes.io/auth-url': 'http://10.96.7.7/check' } }),
    ]);
    expect(diagnostics.find((d) => d.code === 'auth-url-unreachable')?.message).toContain('Service team-b/billing in another namespace');
  });
});

describe('sizes that reflect cost', () => {
  const names = (count: number, label: string) => Array.from({ length: count }, (_, i) => `${label}${i}.example.test`);
  const paths = (count: number) => Array.from({ length: count }, (_, i) => `/p${i}`);
  const invalid = (diagnostics: readonly Diagnostic[], annotation: string) =>
    diagnostics.filter((d) => d.code === 'annotation-invalid' && d.field?.includes(`nginx.ingress.kubernetes.io/${annotation}`)).map((d) => `${d.resource?.namespace}/${d.resource?.name}`);

  it('refuses 3,000 server-alias names (the 44 s validate of the issue) instead of rendering 300,000 locations', () => {
    const { model, diagnostics } = run([
      ...services('team-a'),
      ingress('team-a', 'big', { hosts: ['app.example.test'], paths: paths(100), annotations: { 'nginx.ingress.kubernetes.io/server-alias': names(3000, 'a').join(', ') } }),
    ]);
    expect(invalid(diagnostics, 'server-alias')).toEqual(['team-a/big']);
    expect(model.http.virtualHosts.map((h) => h.serverName)).toEqual(['app.example.test']);
  });

  it('refuses an Ingress whose hosts and aliases times paths pass the per-Ingress limit; another is served', () => {
    const { model, diagnostics } = run([
      ...services('team-a'),
      ingress('team-a', 'wide', { hosts: ['app.example.test'], paths: paths(100), annotations: { 'nginx.ingress.kubernetes.io/server-alias': names(60, 'a').join(', ') } }),
      ingress('team-a', 'fine', { hosts: ['fine.example.test'], paths: paths(100), annotations: { 'nginx.ingress.kubernetes.io/server-alias': names(40, 'f').join(', ') } }),
    ]);
    expect(about(diagnostics, 'ingress-too-large')).toEqual(['team-a/wide']);
    expect(model.http.virtualHosts.filter((h) => h.serverName.startsWith('f')).length).toBe(41);
    expect(model.http.virtualHosts.some((h) => h.serverName === 'app.example.test')).toBe(false);
  });

  it('keeps a namespace to its share: its newest Ingresses past the limit are left out, another namespace is served', () => {
    const wide = (namespace: string, index: number, created: string) =>
      ingress(namespace, `wide-${index}`, { hosts: names(45, `${namespace}-${index}-`), paths: paths(100), created });
    const greedy = Array.from({ length: 12 }, (_, i) => wide('team-a', i, `2024-01-${String(i + 1).padStart(2, '0')}T00:00:00Z`));
    const { diagnostics } = run([...services('team-a', 'team-b'), ...greedy, wide('team-b', 0, newer)]);
    expect(about(diagnostics, 'namespace-too-large')).toEqual(['team-a/wide-11']);
    expect(about(diagnostics, 'ingress-too-large')).toEqual([]);
  });

  it.each([
    [{ 'proxy-buffer-size': '1m', 'proxy-buffers-number': '1024' }, 'proxy-buffers-number'],
    [{ 'proxy-buffer-size': '1m', 'proxy-buffers-number': '9' }, 'proxy-buffers-number'],
    [{ 'proxy-buffer-size': '16k', 'proxy-buffers-number': '1024' }, 'proxy-buffers-number'],
    [{ 'proxy-buffer-size': '0' }, 'proxy-buffer-size'],
    [{ 'proxy-buffer-size': '512' }, 'proxy-buffer-size'],
  ])('refuses buffers %j that one request may not hold, and renders the ConfigMap\'s', (annotations, field) => {
    const { model, diagnostics } = run([
      ...services('team-a'),
      ingress('team-a', 'greedy', {
        hosts: ['app.example.test'],
        annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])),
      }),
    ]);
    expect(invalid(diagnostics, field)).toEqual(['team-a/greedy']);
    expect(model.http.virtualHosts[0]?.locations.find((l) => l.path === '/')?.proxy?.tuning?.buffers).toBeUndefined();
  });

  it('accepts 8m of buffers in all', () => {
    const { diagnostics } = run([
      ...services('team-a'),
      ingress('team-a', 'big', { hosts: ['app.example.test'], annotations: { 'nginx.ingress.kubernetes.io/proxy-buffer-size': '1m', 'nginx.ingress.kubernetes.io/proxy-buffers-number': '8' } }),
    ]);
    expect(diagnostics).toEqual([]);
  });

  it('renders 256 CORS origins as entries nginx reads (not one parameter past its 4 KB limit), and refuses a 257th', async () => {
    const origins = (count: number) => Array.from({ length: count }, (_, i) => `https://a-rather-long-origin-name-${i}.partner.example.test`).join(', ');
    const cors = (count: number) => ingress('team-a', 'cors', {
      hosts: ['app.example.test'],
      annotations: { 'nginx.ingress.kubernetes.io/enable-cors': 'true', 'nginx.ingress.kubernetes.io/cors-allow-origin': origins(count) },
    });
    expect(invalid(run([...services('team-a'), cors(257)]).diagnostics, 'cors-allow-origin')).toEqual(['team-a/cors']);
    const objects = [...services('team-a'), cors(256)];
    expect(run(objects).diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    expect(await nginxOutput(objects)).toMatchObject({ ok: true });
  });

  it('refuses a header list nginx would read as one parameter past its limit', () => {
    const headers = Array.from({ length: 64 }, (_, i) => `X-A-Long-Header-Name-Number-${String(i).padStart(30, '0')}`).join(',');
    const { diagnostics } = run([
      ...services('team-a'),
      ingress('team-a', 'cors', { hosts: ['app.example.test'], annotations: { 'nginx.ingress.kubernetes.io/enable-cors': 'true', 'nginx.ingress.kubernetes.io/cors-allow-headers': headers } }),
    ]);
    expect(invalid(diagnostics, 'cors-allow-headers')).toEqual(['team-a/cors']);
  });
});

describe('regexes that would cost every tenant are refused at the resource that wrote them', () => {
  const costly = ['(a|a)*$', '(.*a){12}$', '((a{999}){999}){999}', '.*a.*b$'];

  it.each(costly)('a use-regex path /%s is refused; the path is not rendered, the other tenant is served', (regex) => {
    const { model, diagnostics } = run([
      ...services('team-a', 'team-b'),
      ingress('team-a', 'costly', { hosts: ['a.example.test'], paths: [`/${regex}`], annotations: { 'nginx.ingress.kubernetes.io/use-regex': 'true' } }),
      ingress('team-b', 'fine', { hosts: ['b.example.test'] }),
    ]);
    expect(about(diagnostics, 'path-invalid')).toEqual(['team-a/costly']);
    expect(model.http.virtualHosts.map((h) => h.serverName)).toEqual(['b.example.test']);
  });

  it.each(costly)('a canary-by-header-pattern %s is refused at the canary, never at the main Ingress', (regex) => {
    const { model, diagnostics } = run([
      ...services('team-a'),
      ingress('team-a', 'main', { hosts: ['a.example.test'], created: older }),
      ingress('team-a', 'canary', {
        hosts: ['a.example.test'],
        created: newer,
        annotations: {
          'nginx.ingress.kubernetes.io/canary': 'true',
          'nginx.ingress.kubernetes.io/canary-by-header': 'X-Beta',
          'nginx.ingress.kubernetes.io/canary-by-header-pattern': regex,
        },
      }),
    ]);
    expect(diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code} ${d.resource?.name}`)).toContain('annotation-invalid canary');
    expect(diagnostics.filter((d) => d.severity === 'error' && d.resource?.name === 'main')).toEqual([]);
    expect(model.http.virtualHosts[0]?.locations.find((l) => l.path === '/')?.comment).toContain('team-a/main');
  });

  it.each(costly)('an auth-tls-match-cn CN=%s leaves its Ingress out, never the shared CA', (regex) => {
    const { diagnostics } = run([
      ...services('team-a'),
      ingress('team-a', 'strict', {
        hosts: ['a.example.test'],
        tls: true,
        annotations: { 'nginx.ingress.kubernetes.io/auth-tls-secret': 'team-a/ca', 'nginx.ingress.kubernetes.io/auth-tls-match-cn': `CN=${regex}` },
      }),
    ]);
    expect(diagnostics.filter((d) => d.code === 'annotation-invalid').map((d) => `${d.resource?.kind}/${d.resource?.name}`)).toEqual(['Ingress/strict']);
  });
});

describe('files of a resource that is not served', () => {
  let caPem = '';
  beforeAll(async () => {
    caPem = (await createCa(await mkdtemp(join(tmpdir(), 'ingress2nginx-losers-')), 'backend CA')).certPem;
  });

  // Ingress b/newer asks for basic auth and a verified HTTPS backend: its Secrets are checked and become files.
  const contender = (namespace: string, name: string, created: string) =>
    ingress(namespace, name, {
      hosts: ['shop.example.com'],
      created,
      annotations: {
        'nginx.ingress.kubernetes.io/auth-type': 'basic',
        'nginx.ingress.kubernetes.io/auth-secret': 'users',
        'nginx.ingress.kubernetes.io/backend-protocol': 'HTTPS',
        'nginx.ingress.kubernetes.io/proxy-ssl-secret': `${namespace}/backend-ca`,
        'nginx.ingress.kubernetes.io/proxy-ssl-verify': 'on',
      },
    });
  const secrets = (namespace: string) => [
    object('v1', 'Secret', namespace, 'users', { stringData: { auth: 'user:$apr1$4f0bD5Q3$0lEtHQ8wVmAq6CqQ0VrJ21' } }),
    object('v1', 'Secret', namespace, 'backend-ca', { stringData: { 'ca.crt': caPem } }),
  ];
  const paths = (objects: readonly SourceObject[], extra: Partial<TranslateOptions> = {}) =>
    build({ objects }, { ...options, ...extra }).files.map((f) => f.path);

  it('writes them while it is served', () => {
    const files = paths([...services('b'), ...secrets('b'), contender('b', 'newer', newer)]);
    expect(files).toContain('ca/b_backend-ca.crt');
    expect(files).toContain('auth/b_users.htpasswd');
  });

  it.each([
    ['loses its host and path to an older Ingress', {}],
    ['is refused under first-namespace-owns-host', { firstNamespaceOwnsHost: true }],
  ])('writes none when it %s', (_, extra) => {
    const objects = [...services('a', 'b'), ...secrets('b'), ingress('a', 'older', { hosts: ['shop.example.com'], created: older }), contender('b', 'newer', newer)];
    const files = paths(objects, extra);
    expect(files.filter((path) => path.includes('b_'))).toEqual([]);
  });
});
