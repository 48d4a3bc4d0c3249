import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../src/build/build.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { maxProxyBuffersTotalBytes, minProxyBufferBytes } from '../../src/translate/ingress/annotations/proxy.js';
import { maxRoutesPerIngress, maxRoutesPerNamespace } from '../../src/translate/ingress/size-limits.js';
import { sizeInBytes } from '../../src/translate/checks/allowlist.js';
import { configMap, object } from '../support/gateway.js';
import { checkBuiltFiles, requireNginx } from '../support/nginx.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * Sizes a tenant chooses never reach nginx as a cost nobody agreed to, nor as a config only `nginx -t`
 * refuses. Random Ingresses with many hosts, aliases and paths, long origin and header lists, long
 * URLs and every kind of buffer size, checked with a real `nginx -t`:
 * - the config loads (a size the schemas let through is one nginx takes);
 * - no parameter is longer than nginx reads (its 4 KB buffer);
 * - no location asks for more buffer memory per request than the limit;
 * - no Ingress renders more locations than its limit, and no namespace more than its own.
 * `I2N_PROPERTY_RUNS` sets the number of cases.
 */

const runs = Number(process.env.I2N_PROPERTY_RUNS ?? 40);
const annotation = (name: string) => `nginx.ingress.kubernetes.io/${name}`;

interface IngressCase {
  readonly namespace: 'team-a' | 'team-b';
  readonly hosts: number;
  readonly aliases: number;
  readonly paths: number;
  readonly annotations: Readonly<Record<string, string>>;
}

const list = (count: number, item: (i: number) => string, separator = ', ') => Array.from({ length: count }, (_, i) => item(i)).join(separator);

/** Busy sizes around the bounds nginx sets beside the buffers (one buffer; all but one). */
const busySizes = fc.constantFrom('0', '1k', '4k', '8k', '12k', '16k', '64k', '1m', '8m', '9m');

/** The ConfigMap's buffers, whose busy size every location inherits unless it sets its own. */
const configMapBuffers: fc.Arbitrary<Record<string, string>> = fc.record(
  { 'proxy-buffer-size': fc.constantFrom('1k', '4k', '16k'), 'proxy-buffers-number': fc.constantFrom('3', '4', '8'), 'proxy-busy-buffers-size': busySizes },
  { requiredKeys: [] },
);

const annotationValues: Record<string, fc.Arbitrary<string>> = {
  'proxy-buffer-size': fc.constantFrom('0', '512', '1k', '4k', '64k', '1m', '2m', '1024k'),
  'proxy-buffers-number': fc.constantFrom('3', '8', '64', '512', '1024'),
  'proxy-busy-buffers-size': busySizes,
  'client-body-buffer-size': fc.constantFrom('0', '8k', '16m', '17m'),
  'cors-allow-origin': fc.integer({ min: 1, max: 300 }).map((n) => list(n, (i) => `https://origin-${i}-with-a-long-name.partner.example.test`)),
  'cors-allow-headers': fc.integer({ min: 1, max: 80 }).chain((n) => fc.integer({ min: 1, max: 64 }).map((length) => list(n, (i) => `X-${String(i).padStart(length, 'h')}`, ','))),
  'cors-allow-methods': fc.integer({ min: 1, max: 80 }).map((n) => list(n, (i) => `M${'e'.repeat(i % 30)}`)),
  'permanent-redirect': fc.integer({ min: 1, max: 1100 }).map((n) => `https://elsewhere.example.test/${'r'.repeat(n)}`),
  'x-forwarded-prefix': fc.integer({ min: 1, max: 1100 }).map((n) => `/${'p'.repeat(n)}`),
  'whitelist-source-range': fc.integer({ min: 1, max: 400 }).map((n) => list(n, (i) => `10.${i >> 8}.${i & 255}.0/24`, ',')),
  'auth-response-headers': fc.integer({ min: 1, max: 40 }).map((n) => list(n, (i) => `X-Auth-${String(i).padStart(50, '0')}`, ',')),
};

const ingressCase: fc.Arbitrary<IngressCase> = fc.record({
  namespace: fc.constantFrom('team-a', 'team-b'),
  hosts: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 40, max: 70 })),
  aliases: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 90, max: 110 }), fc.constant(3000)),
  paths: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 60, max: 120 })),
  annotations: fc
    .subarray(Object.keys(annotationValues), { maxLength: 4 })
    .chain((keys) => fc.tuple(...keys.map((key) => annotationValues[key]!.map((value) => [key, value] as const))))
    .map((pairs) => Object.fromEntries(pairs)),
});

function toObjects(cases: readonly IngressCase[]): SourceObject[] {
  const objects: SourceObject[] = [];
  for (const namespace of ['team-a', 'team-b']) {
    objects.push(object('v1', 'Service', namespace, 'web', { spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }] } }));
  }
  cases.forEach((c, index) => {
    const annotations: Record<string, string> = Object.fromEntries(Object.entries(c.annotations).map(([k, v]) => [annotation(k), v]));
    if ('cors-allow-origin' in c.annotations || 'cors-allow-headers' in c.annotations || 'cors-allow-methods' in c.annotations) annotations[annotation('enable-cors')] = 'true';
    if (c.aliases > 0) annotations[annotation('server-alias')] = list(c.aliases, (i) => `alias-${index}-${i}.example.test`);
    const backend = { service: { name: 'web', port: { number: 80 } } };
    const paths = Array.from({ length: c.paths }, (_, i) => ({ path: `/p${i}`, pathType: 'Prefix', backend }));
    const rules = Array.from({ length: c.hosts }, (_, h) => ({ host: `h${h}.i${index}.example.test`, http: { paths } }));
    const base = object('networking.k8s.io/v1', 'Ingress', c.namespace, `ing-${index}`, { spec: { ingressClassName: 'nginx', rules } }, { creationTimestamp: `2025-01-${String(index + 1).padStart(2, '0')}T00:00:00Z` });
    objects.push({ ...base, metadata: { ...base.metadata, annotations } });
  });
  return objects;
}

/** The parameters of nginx.conf as nginx's parser reads them: quoted strings and bare words. */
function longestParameter(conf: string): string {
  let longest = '';
  for (const match of conf.matchAll(/"(?:[^"\\]|\\.)*"|[^\s;{}"#]+/g)) if (match[0].length > longest.length) longest = match[0];
  return longest;
}

let scratch: string;

beforeAll(async () => {
  requireNginx();
  scratch = await mkdtemp(join(tmpdir(), 'i2n-sizes-property-'));
});

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

let cases = 0;

describe('sizes a tenant chooses', () => {
  it(`load in nginx, within nginx's parameter limit and the per-request, per-Ingress and per-namespace limits (${runs} cases)`, async () => {
    const nginx = requireNginx();
    await fc.assert(
      fc.asyncProperty(fc.array(ingressCase, { minLength: 1, maxLength: 4 }), configMapBuffers, async (ingresses, data) => {
        const runDir = join(scratch, `run-${cases++}`);
        const result = build(
          { objects: [...toObjects(ingresses), configMap('infra', 'controller', data)] },
          testTranslateOptions({
            runDir,
            now: new Date(),
            configMap: 'infra/controller',
            ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }),
          }),
        );
        const conf = result.files[0]!.contents;
        expect(longestParameter(conf).length).toBeLessThan(4000);

        for (const location of result.model.http.virtualHosts.flatMap((h) => h.locations)) {
          const buffers = location.proxy?.tuning?.buffers;
          if (!buffers) continue;
          expect(sizeInBytes(buffers.size)).toBeGreaterThanOrEqual(minProxyBufferBytes);
          expect(sizeInBytes(buffers.size) * buffers.number).toBeLessThanOrEqual(maxProxyBuffersTotalBytes);
        }

        const perIngress = new Map<string, number>();
        for (const location of result.model.http.virtualHosts.flatMap((h) => h.locations)) {
          const owner = /^(team-[ab]\/ing-\d+) /.exec(location.comment)?.[1];
          if (owner !== undefined) perIngress.set(owner, (perIngress.get(owner) ?? 0) + 1);
        }
        const perNamespace = new Map<string, number>();
        for (const [owner, count] of perIngress) {
          // A Prefix path is two locations (= /p and /p/).
          expect(count, owner).toBeLessThanOrEqual(2 * maxRoutesPerIngress);
          const namespace = owner.split('/')[0]!;
          perNamespace.set(namespace, (perNamespace.get(namespace) ?? 0) + count);
        }
        for (const [namespace, count] of perNamespace) expect(count, namespace).toBeLessThanOrEqual(2 * maxRoutesPerNamespace);

        const check = await checkBuiltFiles(result.files, runDir);
        expect(check.output).toBe('');
        expect(check.ok).toBe(true);
      }),
      { numRuns: runs, seed: process.env.I2N_PROPERTY_SEED ? Number(process.env.I2N_PROPERTY_SEED) : undefined },
    );
  }, Math.max(120_000, runs * 4_000));
});
