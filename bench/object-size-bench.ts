import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from '../src/build/build.js';
import { describeNginx, nginxBuild, type NginxBuild } from '../src/sidecar/nginx.js';
import type { SourceObject } from '../src/sources/snapshot.js';
import { unitsOf } from '../src/translate/checks/size-budget.js';
import { httpRouteLoadCost } from '../src/translate/gateway/http-route-size.js';
import type { HttpRouteSpec } from '../src/translate/gateway/schemas.js';
import { hostileRouteShape, httpGateway, httpRoute, ingress, service, type RouteShape } from './largest-objects.js';
import { nginxCheckCost } from './nginx-check-cost.js';
import { defaultRenderOptions } from './render-options.js';

/**
 * `npm run bench:object-size [-- --max N]`: are render and `nginx -t` linear in the input when every
 * object is as large as its front end accepts (checks/size-budget.ts)? For each kind of largest object
 * (an Ingress of 49 hosts × 100 paths; an HTTPRoute of 64 matches with 33 conditions each; one of 16
 * host names × 144 matches), builds 1, 2, 4, … N of them (one namespace each) and prints the build's
 * time and heap, `nginx -t`'s time and peak memory, and each per thousand units: flat columns are
 * linear. The hostile route of issue 37 is built too, and is refused before render. Prints figures;
 * exits 0 whatever they are.
 */

const routeWithConditions: RouteShape = { hosts: 1, rules: 16, matches: 4, conditions: 16 };
const routeWithHosts: RouteShape = { hosts: 16, rules: 16, matches: 9, conditions: 0 };

interface Kind {
  readonly name: string;
  readonly object: (namespace: string) => SourceObject;
  readonly units: number;
}

const routeUnits = (shape: RouteShape) => unitsOf(httpRouteLoadCost((httpRoute('n', 'r', shape).raw as { spec: HttpRouteSpec }).spec, shape.hosts));

const kinds: readonly Kind[] = [
  { name: 'Ingress 49 hosts x 100 paths', object: (ns) => ingress(ns, 'largest', 49, 100), units: 49 * 100 + 49 },
  { name: 'HTTPRoute 64 matches x 33 conditions', object: (ns) => httpRoute(ns, 'largest', routeWithConditions), units: routeUnits(routeWithConditions) },
  { name: 'HTTPRoute 16 hosts x 144 matches', object: (ns) => httpRoute(ns, 'largest', routeWithHosts), units: routeUnits(routeWithHosts) },
];

function scales(max: number): number[] {
  const out: number[] = [];
  for (let n = 1; n <= max; n *= 2) out.push(n);
  return out;
}

function heapUsed(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

async function measure(objects: readonly SourceObject[], runDir: string, binary: string, nginx: NginxBuild) {
  // The stream module as this nginx has it: a file to load, or compiled in (no load_module).
  const { streamModulePath: _debianModule, ...defaults } = defaultRenderOptions('bench');
  const options = { ...defaults, runDir, nginxVersion: nginx.version, ...(nginx.streamModulePath !== undefined && { streamModulePath: nginx.streamModulePath }) };
  const before = heapUsed();
  const started = performance.now();
  const result = build({ objects }, options);
  const ms = performance.now() - started;
  const heap = heapUsed() - before;
  const check = await nginxCheckCost(result.files, runDir, binary);
  const errors = result.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code);
  return { ms, heap, check, confBytes: Buffer.byteLength(result.files[0]?.contents ?? ''), errors };
}

async function main(): Promise<void> {
  const maxArg = process.argv.indexOf('--max');
  const max = maxArg >= 0 ? Number(process.argv[maxArg + 1]) : 16;
  // The nginx on PATH, or NGINX_BIN (the pinned newer one: NGINX_BIN=$(node scripts/build-nginx.mjs)).
  const binary = process.env.NGINX_BIN ?? 'nginx';
  const nginx = await nginxBuild(binary);
  console.log(`largest objects, doubled (${cpus().length} CPUs, Node ${process.version}); ${describeNginx(nginx)} (${binary})`);
  const dir = await mkdtemp(join(tmpdir(), 'i2n-object-size-'));
  try {
    const header = 'objects    units  conf KB  build ms  heap MB  nginx -t ms  nginx -t MB  build ms/k  -t ms/k  -t MB/k';
    for (const kind of kinds) {
      console.log(`\n${kind.name} (${kind.units} units each)\n${header}`);
      for (const n of scales(max)) {
        const namespaces = Array.from({ length: n }, (_, i) => `t${i}`);
        const objects = [httpGateway(), ...namespaces.map((ns, i) => service(ns, 'web', i)), ...namespaces.map((ns) => kind.object(ns))];
        const m = await measure(objects, join(dir, 'run'), binary, nginx);
        const k = (n * kind.units) / 1000;
        const mb = (bytes: number) => bytes / 1048576;
        if (!m.check.ok || m.errors.length > 0) console.log(`  (nginx -t ${m.check.ok ? 'ok' : `failed: ${m.check.output.split('\n')[0]}`}; errors: ${m.errors.join(', ') || 'none'})`);
        console.log(
          [
            String(n).padStart(7),
            String(n * kind.units).padStart(8),
            (m.confBytes / 1024).toFixed(0).padStart(8),
            m.ms.toFixed(0).padStart(9),
            mb(m.heap).toFixed(1).padStart(8),
            m.check.ms.toFixed(0).padStart(12),
            mb(m.check.peakRss).toFixed(0).padStart(12),
            (m.ms / k).toFixed(1).padStart(11),
            (m.check.ms / k).toFixed(1).padStart(8),
            (mb(m.check.peakRss) / k).toFixed(2).padStart(8),
          ].join(' '),
        );
      }
    }
    const hostile = await measure([httpGateway(), service('t0', 'web'), httpRoute('t0', 'hostile', hostileRouteShape)], join(dir, 'run'), binary, nginx);
    console.log(
      `\nthe hostile HTTPRoute of issue 37 (16 rules x 64 matches x 33 conditions): ${hostile.errors.join(', ')}; build ${hostile.ms.toFixed(0)} ms, conf ${(hostile.confBytes / 1024).toFixed(0)} KB, nginx -t ${hostile.check.ms.toFixed(0)} ms / ${(hostile.check.peakRss / 1048576).toFixed(0)} MB`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
