import { describe, expect, it } from 'vitest';
import type { Snapshot, SourceObject } from '../../src/sources/snapshot.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { testTranslateOptions } from '../support/options.js';
import { translate } from '../../src/translate/translate.js';
import { upstreamName } from '../../src/translate/upstream-names.js';

/**
 * nginx looks upstream blocks up by name with a linear search (at load for every proxy_pass, per
 * connection for a stream proxy_pass with a variable): names must end a comparison early, and passthrough
 * maps name a lone backend by its address so that no lookup happens per connection.
 */

const options: TranslateOptions = testTranslateOptions();

function object(kind: string, apiVersion: string, name: string, raw: Record<string, unknown>, extra: Partial<SourceObject['metadata']> = {}): SourceObject {
  return {
    apiVersion,
    kind,
    metadata: { name, namespace: 'db', annotations: {}, labels: {}, creationTimestamp: '2026-01-01T00:00:00Z', ...extra },
    raw: { apiVersion, kind, metadata: { name, namespace: 'db' }, ...raw },
  };
}

const passthroughIngress = (name: string, service: string) =>
  object(
    'Ingress',
    'networking.k8s.io/v1',
    name,
    {
      spec: {
        ingressClassName: 'nginx',
        rules: [{ host: `${name}.example.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: 5432 } } } }] } }],
      },
    },
    { annotations: { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' } },
  );
const service = (name: string, clusterIP: string) => object('Service', 'v1', name, { spec: { clusterIP, ports: [{ name: 'pg', port: 5432 }] } });
const slice = (name: string, serviceName: string, addresses: string[]) =>
  object(
    'EndpointSlice',
    'discovery.k8s.io/v1',
    name,
    { addressType: 'IPv4', ports: [{ name: 'pg', port: 15432 }], endpoints: addresses.map((a) => ({ addresses: [a] })) },
    { labels: { 'kubernetes.io/service-name': serviceName } },
  );

function run(extra: Partial<TranslateOptions>, ...objects: SourceObject[]) {
  const snapshot: Snapshot = { objects };
  return translate(snapshot, { ...options, ...extra });
}

describe('upstream block names', () => {
  it('begin with two letters of a digest, so that names of one shape differ at the first character', () => {
    const names = Array.from({ length: 1000 }, (_, i) => upstreamName(`team-${String(i % 20).padStart(2, '0')}_app-${String(i).padStart(5, '0')}_80`));
    for (const name of names) expect(name).toMatch(/^[a-z]{2}_team-\d\d_app-\d{5}_80$/);
    expect(upstreamName('web_site_80')).toBe(upstreamName('web_site_80'));
    const firstLetters = new Map<string, number>();
    for (const name of names) firstLetters.set(name[0]!, (firstLetters.get(name[0]!) ?? 0) + 1);
    // 26 letters: about 38 names each; readable names would all begin with "t".
    expect(Math.max(...firstLetters.values())).toBeLessThan(100);
  });
});

describe('passthrough backends', () => {
  it('names a Service with one address by that address in the passthrough map, with no upstream block', () => {
    const { model, diagnostics } = run({}, service('pg', '10.96.0.7'), passthroughIngress('pg', 'pg'));
    expect(diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    expect(model.stream.upstreams).toEqual([]);
    expect(model.stream.passthroughServers.flatMap((s) => s.routes)).toEqual([
      expect.objectContaining({ serverName: 'pg.example.test', backend: '10.96.0.7:5432', comment: expect.stringContaining('Service db/pg port 5432') }),
    ]);
  });

  it('keeps an upstream block for a backend with several addresses (endpoints)', () => {
    const { model, diagnostics } = run(
      { upstreams: 'endpoints' },
      service('pg', '10.96.0.7'),
      slice('pg-a', 'pg', ['10.1.0.2', '10.1.0.3']),
      passthroughIngress('pg', 'pg'),
    );
    expect(diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const name = upstreamName('db_pg_5432');
    expect(model.stream.upstreams).toEqual([expect.objectContaining({ name, servers: [{ address: '10.1.0.2:15432' }, { address: '10.1.0.3:15432' }] })]);
    expect(model.stream.passthroughServers.flatMap((s) => s.routes.map((r) => r.backend))).toEqual([name]);
  });
});
