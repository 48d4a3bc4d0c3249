import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { deployedContainer, envOf } from '../support/deployment.js';

/**
 * Without a heap size of its own, Node sizes V8's heap from the container's memory limit: under deploy/'s
 * 768 MiB that is a 396 MiB heap, about what the sidecar holds at 10,000 Ingresses before it builds
 * anything. It then collects garbage without pause (a one-Ingress rebuild took 1.25 s instead of
 * 0.4–0.6 s in `npm run bench:sidecar -- reload`) and is one burst from running out. The Deployment
 * sets the heap itself, and that heap with what the process holds outside it fits the container.
 */
const mib = 1024 * 1024;
/** Measured beside the heap at 10,000 Ingresses (RSS − heap committed): code, Node's own, buffers. 110–130 MB. */
const outsideHeapMib = 160;
/**
 * What the sidecar holds at 10,000 Ingresses after a full collection (heap snapshot), with room to build
 * a change (512), and the admission webhook's memo beside the sync loop's (~170 MiB, `npm run bench:admission`).
 */
const neededOldSpaceMib = 512 + 192;

function megabytes(quantity: string): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
}

function flag(options: string, name: string): number | undefined {
  const match = new RegExp(`--${name}=(\\d+)`).exec(options);
  return match ? Number(match[1]) : undefined;
}

describe('the sidecar container of deploy/', () => {
  it('sets a heap that holds 10,000 Ingresses and fits the memory limit with what is outside the heap', async () => {
    const sidecar = await deployedContainer('ingress2nginx');
    const options = envOf(sidecar, 'NODE_OPTIONS') ?? '';
    const oldSpace = flag(options, 'max-old-space-size');
    const semiSpace = flag(options, 'max-semi-space-size') ?? 16;
    expect(oldSpace, 'NODE_OPTIONS sets --max-old-space-size').toBeDefined();
    expect(oldSpace!).toBeGreaterThanOrEqual(neededOldSpaceMib);
    // The young generation is three semi-spaces at most.
    expect(oldSpace! + 3 * semiSpace + outsideHeapMib).toBeLessThanOrEqual(megabytes(sidecar.resources?.limits?.memory ?? '0Mi'));
  });

  it('has NODE_OPTIONS that Node takes, with the heap they say', async () => {
    const options = envOf(await deployedContainer('ingress2nginx'), 'NODE_OPTIONS') ?? '';
    const { stdout } = await execa(process.execPath, ['-p', 'require("node:v8").getHeapStatistics().heap_size_limit'], { env: { NODE_OPTIONS: options } });
    const limitMib = Number(stdout) / mib;
    expect(limitMib).toBeGreaterThanOrEqual(flag(options, 'max-old-space-size')!);
    expect(limitMib).toBeLessThan(flag(options, 'max-old-space-size')! + 64);
  });
});
