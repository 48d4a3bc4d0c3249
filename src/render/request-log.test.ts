import { describe, expect, it } from 'vitest';
import { build } from '../build/build.js';
import { requestLogTables } from '../translate/dataplane/request-log.js';
import type { Snapshot, SourceObject } from '../sources/snapshot.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TranslateOptions } from '../translate/options.js';
import { checkBuiltFiles, requireNginx } from '../../test/support/nginx.js';
import { testTranslateOptions } from '../../test/support/options.js';

/** `nginx -t` of the build, with this machine's nginx. */
async function loads(input: Snapshot, options: Partial<TranslateOptions>): Promise<boolean> {
  const nginx = requireNginx();
  const runDir = join(tmpdir(), 'i2n-request-log-run');
  const streamModule = nginx.streamModuleFile !== undefined ? { streamModulePath: nginx.streamModuleFile } : {};
  return (await checkBuiltFiles(build(input, testTranslateOptions({ ...options, runDir, ...streamModule })).files, runDir)).ok;
}

const ingressNginxDefaultFormat =
  '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $i2n_request_id';

function snapshot(configData: Record<string, string> = {}): Snapshot {
  const path = (p: string, service: string) => ({ path: p, pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } });
  const objects = [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api', namespace: 'shop' }, spec: { clusterIP: '10.0.0.1', ports: [{ port: 80 }] } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { clusterIP: '10.0.0.2', ports: [{ port: 80 }] } },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'storefront', namespace: 'shop' },
      spec: { ingressClassName: 'nginx', rules: [{ host: 'shop.example.test', http: { paths: [path('/api', 'api'), path('/', 'web')] } }] },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'controller', namespace: 'ingress' }, data: configData },
  ];
  return {
    objects: objects.map((raw): SourceObject => ({ apiVersion: raw.apiVersion, kind: raw.kind, metadata: { ...raw.metadata, annotations: {}, labels: {}, creationTimestamp: '' }, raw })),
  };
}

describe('request logging', () => {
  it('changes nothing in a config that logs nothing', () => {
    const conf = build(snapshot(), testTranslateOptions()).files[0]!.contents;
    expect(conf).toContain('    access_log off;\n');
    expect(conf).not.toMatch(/i2n_route|proxy_upstream_name|log_format/);
  });

  it("writes the access log in ingress-nginx's default format, JSON-escaped with log-format-escape-json, and nginx loads it", async () => {
    const plain = build(snapshot(), testTranslateOptions({ accessLog: '/var/log/nginx/access.log', configMap: 'ingress/controller' }));
    const conf = plain.files[0]!.contents;
    expect(conf).toContain(`    log_format upstreaminfo '${ingressNginxDefaultFormat}';\n    access_log /var/log/nginx/access.log upstreaminfo;\n`);
    expect(conf).toContain('            set $proxy_upstream_name shop-api-80;\n');
    expect(conf).not.toContain('log_format i2n_request');
    const json = build(snapshot({ 'log-format-escape-json': 'true' }), testTranslateOptions({ accessLog: '/var/log/nginx/access.log', configMap: 'ingress/controller' }));
    expect(json.files[0]!.contents).toContain(`    log_format upstreaminfo escape=json '${ingressNginxDefaultFormat}';\n`);
    expect(await loads(snapshot({ 'log-format-escape-json': 'true' }), { accessLog: '/tmp/i2n-access.log', configMap: 'ingress/controller' })).toBe(true);
  });

  it('labels each proxied location with the Ingress path it serves, and nginx loads the request lines', async () => {
    const result = build(snapshot(), testTranslateOptions({ requestLog: '/tmp/i2n-requests.log', stubStatus: true }));
    const conf = result.files[0]!.contents;
    expect(conf).toContain('access_log /tmp/i2n-requests.log i2n_request buffer=64k flush=1s;');
    const tables = requestLogTables(result.model);
    const keys = [...conf.matchAll(/set \$i2n_route ([0-9a-f]+);/g)].map((m) => m[1]!);
    expect(new Set(keys.map((key) => tables.routes.get(key)))).toEqual(
      new Set([
        { namespace: 'shop', ingress: 'storefront', service: 'api', path: '/api' },
        { namespace: 'shop', ingress: 'storefront', service: 'web', path: '/' },
      ]),
    );
    expect(tables.hosts).toEqual(['shop.example.test']);
    expect(await loads(snapshot(), { requestLog: '/tmp/i2n-requests.log', stubStatus: true })).toBe(true);
  });
});
