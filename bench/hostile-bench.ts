import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { build } from '../src/build/build.js';
import { readInputs } from '../src/sources/files.js';
import { defaultRenderOptions } from './render-options.js';

/**
 * `npm run bench:hostile`: is `validate` (read, translate, render) linear in the size of a hostile
 * input? Builds one hostile tenant's manifests, then 2, 4 and 8 such tenants, and prints the time of
 * each and the time per KB of input: a flat last column is linear. Each tenant writes what the issue's
 * probes wrote: an Ingress with 3,000 `server-alias` names and 100 paths, one with as many aliases as
 * the per-Ingress limit lets through, Ingresses past the namespace's limit, 256 CORS origins, long
 * header lists, huge buffers and regex paths of the costly shapes. Prints figures; exits 0 whatever they are.
 */

const scales = [1, 2, 4, 8];
const runs = 3;

const backend = { service: { name: 'web', port: { number: 80 } } };
const paths = (count: number, prefix = '/p') => Array.from({ length: count }, (_, i) => ({ path: `${prefix}${i}`, pathType: 'Prefix', backend }));
const annotate = (annotations: Record<string, string>) =>
  Object.fromEntries(Object.entries(annotations).map(([key, value]) => [`nginx.ingress.kubernetes.io/${key}`, value]));

function ingress(namespace: string, name: string, hosts: readonly string[], pathList: readonly unknown[], annotations: Record<string, string> = {}): string {
  return stringify({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace, creationTimestamp: '2025-01-01T00:00:00Z', annotations: annotate(annotations) },
    spec: { ingressClassName: 'nginx', rules: hosts.map((host) => ({ host, http: { paths: pathList } })) },
  });
}

/** One hostile tenant: namespace `t<index>`. */
function tenant(index: number): string[] {
  const ns = `t${index}`;
  const names = (count: number, label: string) => Array.from({ length: count }, (_, i) => `${label}${i}.${ns}.example.test`);
  const documents = [
    stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: ns }, spec: { clusterIP: `10.96.${index % 250}.1`, ports: [{ port: 80 }] } }),
    // The probe: 3,000 aliases and 100 paths (51 KB), refused by the alias limit.
    ingress(ns, 'aliases-3000', [`big.${ns}.example.test`], paths(100), { 'server-alias': names(3000, 'a').join(', ') }),
    // As many aliases as the per-Ingress limit lets through.
    ingress(ns, 'aliases-at-limit', [`limit.${ns}.example.test`], paths(100), { 'server-alias': names(48, 'b').join(', ') }),
    ingress(ns, 'cors', [`cors.${ns}.example.test`], paths(10), {
      'enable-cors': 'true',
      'cors-allow-origin': Array.from({ length: 256 }, (_, i) => `https://o${i}.${ns}.example.test`).join(', '),
      'cors-allow-headers': Array.from({ length: 64 }, (_, i) => `X-H${i}`).join(','),
    }),
    ingress(ns, 'buffers', [`buffers.${ns}.example.test`], paths(10), { 'proxy-buffer-size': '1m', 'proxy-buffers-number': '1024' }),
    ingress(ns, 'regex', [`regex.${ns}.example.test`], ['/(a|a)*$', '/(.*a){12}$', '/.*a.*b$', '/api(/|$)(.*)', '/v[0-9]+/(.*)', '/((a{999}){999}){999}'].map((path) => ({ path, pathType: 'ImplementationSpecific', backend })), {
      'use-regex': 'true',
    }),
  ];
  // Past the namespace's limit: 14 Ingresses of 40 hosts × 100 paths each.
  for (let i = 0; i < 14; i++) documents.push(ingress(ns, `wide-${i}`, names(40, `w${i}-`), paths(100)));
  return documents;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'i2n-hostile-bench-'));
  console.log(`hostile input, doubled: validate = read + translate + render, best of ${runs} (${cpus().length} CPUs, Node ${process.version})`);
  console.log('tenants  input KB  objects  locations  conf KB  errors     ms  ms per input KB');
  try {
    for (const scale of scales) {
      const file = join(dir, `hostile-${scale}.yaml`);
      const text = Array.from({ length: scale }, (_, i) => tenant(i)).flat().join('---\n');
      await writeFile(file, text);
      let best = Infinity;
      let summary = { objects: 0, locations: 0, confBytes: 0, errors: 0 };
      for (let run = 0; run < runs; run++) {
        const started = performance.now();
        const source = await readInputs([file]);
        const result = build(source.snapshot, defaultRenderOptions(file));
        best = Math.min(best, performance.now() - started);
        summary = {
          objects: source.snapshot.objects.length,
          locations: result.model.http.virtualHosts.reduce((n, h) => n + h.locations.length, 0),
          confBytes: Buffer.byteLength(result.files[0]?.contents ?? ''),
          errors: result.diagnostics.filter((d) => d.severity === 'error').length,
        };
      }
      const kb = Buffer.byteLength(text) / 1024;
      console.log(
        [
          String(scale).padStart(7),
          kb.toFixed(0).padStart(9),
          String(summary.objects).padStart(8),
          String(summary.locations).padStart(10),
          (summary.confBytes / 1024).toFixed(0).padStart(8),
          String(summary.errors).padStart(7),
          best.toFixed(0).padStart(6),
          (best / kb).toFixed(2).padStart(16),
        ].join(' '),
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
