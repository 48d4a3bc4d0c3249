import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, newBuildMemo } from '../../build/build.js';
import { readInputs } from '../../sources/files.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { fixturesRoot } from '../../../test/support/golden.js';
import { testTranslateOptions } from '../../../test/support/options.js';

/** The lists the cluster mode reads besides the config, kept by the memo while they come out the same. */
describe('the served lists of a memoized build', () => {
  it('name an Ingress renamed in place, though as many Ingresses are served in the same order', async () => {
    const { snapshot } = await readInputs([join(fixturesRoot, 'merging', 'input')]);
    const options = testTranslateOptions();
    const memo = newBuildMemo();
    const first = build(snapshot, options, memo);
    const renamed = first.ingresses[0]!;
    const objects = snapshot.objects.map((o): SourceObject => {
      if (o.kind !== 'Ingress' || o.metadata.namespace !== renamed.namespace || o.metadata.name !== renamed.name) return o;
      const metadata = { ...o.metadata, name: `${o.metadata.name}-renamed` };
      return { ...o, metadata, raw: { ...o.raw, metadata: { ...(o.raw['metadata'] as object), name: metadata.name } } };
    });
    const memoized = build({ objects }, options, memo);
    expect(memoized.ingresses).toHaveLength(first.ingresses.length);
    expect(memoized.ingresses).toContainEqual({ namespace: renamed.namespace, name: `${renamed.name}-renamed` });
    expect(memoized.ingresses).toEqual(build({ objects }, options).ingresses);
  });

  it('keep a host\'s entry while its certificate is the same, and give it up when the certificate changes', async () => {
    const { snapshot } = await readInputs([join(fixturesRoot, 'termination', 'input')]);
    const options = testTranslateOptions();
    const memo = newBuildMemo();
    const first = build(snapshot, options, memo);
    expect(first.certificates.length).toBeGreaterThan(0);
    const again = build({ objects: [...snapshot.objects] }, options, memo);
    expect(again.certificates[0]).toBe(first.certificates[0]);
    // A certificate for another host: the hosts are served the default certificate instead.
    const other = (await readInputs([join(fixturesRoot, 'certificates', 'input')])).snapshot.objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'wildcard')!;
    const tls = snapshot.objects.find((o) => o.kind === 'Secret')!;
    const swapped = snapshot.objects.map((o) => (o === tls ? { ...o, raw: { ...o.raw, data: other.raw['data'] } } : o));
    const after = build({ objects: swapped }, options, memo).certificates;
    expect(after.map((c) => c.serialNumber)).not.toEqual(first.certificates.map((c) => c.serialNumber));
    expect(after).toEqual(build({ objects: swapped }, options).certificates);
  });
});
