import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, newBuildMemo } from '../../build/build.js';
import { readInputs } from '../../sources/files.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { fixturesRoot } from '../../../test/support/golden.js';
import { testTranslateOptions } from '../../../test/support/options.js';

/**
 * The stream of the last build is used again while what it routes is equal (stream-memo.ts); that a
 * memoized build always gives what a fresh one gives is test/unit/claim-memo.test.ts's property.
 */
describe('StreamMemo', () => {
  const input = join(fixturesRoot, 'passthrough', 'input');

  async function twoBuilds(change: (object: SourceObject) => SourceObject) {
    const objects = [...(await readInputs([input])).snapshot.objects];
    const options = testTranslateOptions();
    const memo = newBuildMemo();
    const first = build({ objects }, options, memo);
    const second = build({ objects: objects.map(change) }, options, memo);
    return { first: first.model.stream, second: second.model.stream, fresh: build({ objects: objects.map(change) }, options).model.stream };
  }

  it('keeps the stream when every Ingress is a new object with the same content', async () => {
    const { first, second } = await twoBuilds((o) => (o.kind === 'Ingress' ? { ...o, raw: structuredClone(o.raw) } : o));
    expect(second.frontends).toBe(first.frontends);
  });

  it('makes it again when a passthrough host changes', async () => {
    const renamed = (o: SourceObject): SourceObject => {
      if (o.kind !== 'Ingress' || o.metadata.name !== 'vault') return o;
      const raw = structuredClone(o.raw) as { spec: { rules: { host: string }[] } };
      raw.spec.rules[0]!.host = 'vault-renamed.example.com';
      return { ...o, raw: raw as unknown as SourceObject['raw'] };
    };
    const { first, second, fresh } = await twoBuilds(renamed);
    expect(second.frontends).not.toBe(first.frontends);
    expect(second).toEqual(fresh);
    expect(JSON.stringify(second.frontends)).toContain('vault-renamed.example.com');
  });
});
