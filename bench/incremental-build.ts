import { build, newBuildMemo } from '../src/build/build.js';
import { readInputs } from '../src/sources/files.js';
import type { SourceObject } from '../src/sources/snapshot.js';
import { defaultRenderOptions } from './render-options.js';
import { KeyPairCache } from '../src/translate/secrets/key-pairs.js';

const changes = 20;

/** `object` as the watch would hand it over after an edit of its first path: a new object, the others kept. */
function edited(object: SourceObject, round: number): SourceObject {
  const raw = structuredClone(object.raw) as { spec?: { rules?: { http?: { paths?: { path?: string }[] } }[] } };
  const path = raw.spec?.rules?.[0]?.http?.paths?.[0];
  if (path) path.path = `/bench-${round}`;
  return { ...object, raw, metadata: { ...object.metadata, resourceVersion: `bench-${round}` } };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * The cluster mode's build after one changed Ingress, in this process: the generated input as the watches
 * would hold it (objects kept while unchanged), the sidecar's options (request metrics on, one cache of
 * parsed key pairs), one memo across builds, one Ingress edited before each build. No API server and no nginx, so the figure is the
 * build alone, as the sidecar logs it ("build" of a sync).
 */
export async function incrementalBuild(inputDir: string, out: (line?: string) => void): Promise<void> {
  const { snapshot } = await readInputs([inputDir]);
  const options = { ...defaultRenderOptions(inputDir), expectClusterProvided: false, requestLog: '/run/ingress2nginx/requests.log', stubStatus: true, keyPairs: new KeyPairCache() };
  const memo = newBuildMemo();
  const objects = [...snapshot.objects];
  const ingresses = objects.flatMap((object, index) => (object.kind === 'Ingress' ? [index] : []));
  let started = performance.now();
  build({ objects }, options, memo);
  const first = performance.now() - started;
  const times: number[] = [];
  for (let round = 0; round < changes; round++) {
    const index = ingresses[(round * 997) % ingresses.length]!;
    objects[index] = edited(objects[index]!, round);
    started = performance.now();
    build({ objects }, options, memo);
    times.push(performance.now() - started);
  }
  const sorted = [...times].sort((a, b) => a - b);
  (globalThis as { gc?: () => void }).gc?.();
  const heap = process.memoryUsage().heapUsed;
  out();
  out(`one changed Ingress among ${ingresses.length.toLocaleString('en')}, built in this process with the cluster mode's memo (${changes} changes, one at a time):`);
  out(`  first build ${first.toFixed(0)} ms; after a change: median ${percentile(sorted, 50).toFixed(0)} ms, p90 ${percentile(sorted, 90).toFixed(0)} ms, range ${sorted[0]!.toFixed(0)}–${sorted.at(-1)!.toFixed(0)} ms (target ≤ 300 ms)`);
  out(`  heap used with the input, the memo and no result held: ${(heap / 1e6).toFixed(0)} MB${(globalThis as { gc?: unknown }).gc ? ' (after gc)' : ' (run node with --expose-gc to collect first)'}`);
}
