import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { build } from '../../src/build/build.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { object } from '../support/gateway.js';
import { checkBuiltFiles, requireNginx } from '../support/nginx.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * Cookie affinity, upstream-hash-by and load-balance against a real `nginx -t`, over random Ingresses
 * (and canaries) of two Services with endpoints, each annotation ordinary, invalid or hostile, mixed with
 * annotations that share their locations and upstreams (CORS, error pages, HTTPS backends, canary headers):
 * - the config always loads, whichever Ingresses of one Service balance alike or differently;
 * - no hostile text (it carries the marker) reaches nginx.conf: what a value may hold is allow-listed.
 */

const runs = Number(process.env.I2N_PROPERTY_RUNS ?? 40);
const marker = 'I2NMARK';
const runDir = '/tmp/i2n-property-stickiness';

const annotationValues: Record<string, readonly string[]> = {
  affinity: ['cookie', 'cookie', 'Cookie', `cookie;${marker}`],
  'affinity-mode': ['balanced', 'persistent', `${marker}`],
  'affinity-canary-behavior': ['sticky', 'legacy', `legacy"${marker}`],
  'session-cookie-name': ['route', 'a.b-c~d', `${marker}=x; Path=/`, `${marker}$request_id`],
  'session-cookie-path': ['/', '/app/x', `/${marker}"; }`, `/${marker};Domain=x`],
  'session-cookie-domain': ['.example.test', 'shop.example.test', `${marker}.test; Secure`],
  'session-cookie-expires': ['172800', '0', '-1', `1${marker}`],
  'session-cookie-max-age': ['3600', '-5', `${marker}`],
  'session-cookie-secure': ['true', 'false', `${marker}`],
  'session-cookie-samesite': ['None', 'lax', 'Strict', `None; ${marker}`],
  'session-cookie-conditional-samesite-none': ['true', 'false'],
  'session-cookie-change-on-failure': ['true', 'false'],
  'upstream-hash-by': ['$request_uri', '${arg_x}-$http_x_user', '$binary_remote_addr$cookie_sid', `$host" consistent; ${marker}`, `$${marker}`, `\${host}${marker}{`],
  'upstream-hash-by-subset': ['true'],
  'load-balance': ['round_robin', 'least_conn', 'ewma', `least_conn;${marker}`],
  'use-regex': ['true'],
  // What shares a location or an upstream with them: other response headers, error pages, TLS variants.
  'enable-cors': ['true'],
  'custom-http-errors': ['503'],
  'default-backend': ['api'],
  'backend-protocol': ['HTTPS'],
  'proxy-ssl-server-name': ['on'],
  'canary-by-header': ['X-Canary'],
};

interface IngressCase {
  readonly service: 'web' | 'api';
  readonly path: '/' | '/a' | '/b(/|$)(.*)';
  readonly canary: boolean;
  readonly annotations: readonly (readonly [string, string])[];
}

const ingressCase: fc.Arbitrary<IngressCase> = fc.record({
  service: fc.constantFrom('web', 'api'),
  path: fc.constantFrom('/', '/a', '/b(/|$)(.*)'),
  canary: fc.constantFrom(false, false, false, true),
  annotations: fc
    .subarray(Object.keys(annotationValues), { maxLength: 8 })
    .chain((keys) => fc.tuple(...keys.map((k) => fc.constantFrom(...annotationValues[k]!).map((v) => [k, v] as const)))),
});

function endpointSlice(service: string, addresses: readonly string[]): SourceObject {
  return object('discovery.k8s.io/v1', 'EndpointSlice', 'shop', `${service}-1`, {
    addressType: 'IPv4',
    ports: [{ port: 8080 }],
    endpoints: addresses.map((address) => ({ addresses: [address] })),
  }, { labels: { 'kubernetes.io/service-name': service } });
}

function objectsOf(ingresses: readonly IngressCase[]): SourceObject[] {
  const objects: SourceObject[] = [
    object('v1', 'Service', 'shop', 'web', { spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }] } }),
    object('v1', 'Service', 'shop', 'api', { spec: { clusterIP: '10.96.0.11', ports: [{ port: 80 }] } }),
    endpointSlice('web', ['10.1.0.1', '10.1.0.2', '10.1.0.3']),
    endpointSlice('api', ['10.1.1.1', '10.1.1.2']),
  ];
  ingresses.forEach((c, index) => {
    const annotations = Object.fromEntries([
      ...c.annotations.map(([name, value]) => [`nginx.ingress.kubernetes.io/${name}`, value]),
      ...(c.canary ? [['nginx.ingress.kubernetes.io/canary', 'true'], ['nginx.ingress.kubernetes.io/canary-weight', '30']] : []),
    ]);
    const base = object('networking.k8s.io/v1', 'Ingress', 'shop', `ing-${index}`, {
      spec: { ingressClassName: 'nginx', rules: [{ host: 'shop.example.test', http: { paths: [{ path: c.path, pathType: 'ImplementationSpecific', backend: { service: { name: c.service, port: { number: 80 } } } }] } }] },
    });
    objects.push({ ...base, metadata: { ...base.metadata, annotations } });
  });
  return objects;
}

describe('stickiness annotations', () => {
  it(`always load, and never carry hostile text into nginx.conf (${runs} cases)`, async () => {
    const nginx = requireNginx();
    const options = testTranslateOptions({ runDir, upstreams: 'endpoints', ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }) });
    await fc.assert(
      fc.asyncProperty(fc.array(ingressCase, { minLength: 1, maxLength: 6 }), async (ingresses) => {
        const result = build({ objects: objectsOf(ingresses) }, options);
        for (const file of result.files) {
          expect(file.contents.includes(marker) || file.path.includes(marker), file.path).toBe(false);
        }
        const check = await checkBuiltFiles(result.files, runDir);
        expect(check.output).toBe('');
        expect(check.ok).toBe(true);
      }),
      { numRuns: runs, seed: process.env.I2N_PROPERTY_SEED ? Number(process.env.I2N_PROPERTY_SEED) : undefined },
    );
  }, Math.max(60_000, runs * 500));
});
