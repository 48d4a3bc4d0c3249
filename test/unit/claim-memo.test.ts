import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { build, newBuildMemo } from '../../src/build/build.js';
import { readInputs } from '../../src/sources/files.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { fixturesRoot } from '../support/golden.js';
import { service } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * The claims of an Ingress are made again only when something they read changed (translate/ingress/
 * claim-memo.ts): a build with the memo of earlier builds gives the bytes and diagnostics of a build
 * without it, after any sequence of changes, and a change to a Secret, Service or ConfigMap an Ingress
 * references is seen.
 */

const cases = ['annotations', 'termination', 'merging', 'https-backends', 'stickiness'];

async function objectsOf(name: string): Promise<SourceObject[]> {
  return [...(await readInputs([join(fixturesRoot, name, 'input')])).snapshot.objects];
}

type Change =
  | { readonly kind: 'touch'; readonly index: number }
  | { readonly kind: 'drop'; readonly index: number }
  | { readonly kind: 'restore'; readonly index: number }
  | { readonly kind: 'swap-data'; readonly index: number; readonly from: number };

const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constant('touch' as const), index: fc.nat() }),
  fc.record({ kind: fc.constant('drop' as const), index: fc.nat() }),
  fc.record({ kind: fc.constant('restore' as const), index: fc.nat() }),
  fc.record({ kind: fc.constant('swap-data' as const), index: fc.nat(), from: fc.nat() }),
);

/** The objects after `change`: a new object with the same content, one left out or back, or a Secret or ConfigMap with another's data. */
function applied(objects: SourceObject[], dropped: SourceObject[], change: Change): SourceObject[] {
  const at = (list: readonly SourceObject[], index: number) => list[index % Math.max(list.length, 1)];
  const target = at(objects, change.index);
  switch (change.kind) {
    case 'touch':
      return target ? objects.map((o) => (o === target ? { ...o, raw: { ...o.raw } } : o)) : objects;
    case 'drop':
      if (target) dropped.push(target);
      return objects.filter((o) => o !== target);
    case 'restore': {
      const back = at(dropped, change.index);
      if (!back) return objects;
      dropped.splice(dropped.indexOf(back), 1);
      return [...objects, back];
    }
    case 'swap-data': {
      const holders = objects.filter((o) => o.kind === 'Secret' || o.kind === 'ConfigMap');
      const to = at(holders, change.index);
      const from = at(holders.filter((o) => o.kind === to?.kind), change.from);
      if (!to || !from) return objects;
      return objects.map((o) => (o === to ? { ...o, raw: { ...o.raw, data: from.raw['data'], stringData: from.raw['stringData'] } } : o));
    }
  }
}

describe('claims memoized per resource version', () => {
  it('a build with the memo gives what a fresh build gives, after any sequence of changes', async () => {
    const inputs = await Promise.all(cases.map(async (name) => ({ name, objects: await objectsOf(name) })));
    // With the request log on, the data plane labels every location too (its own memo).
    const optionSets = [testTranslateOptions(), testTranslateOptions({ runDir: '/run/other', requestLog: '/run/other/requests.log' })];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...inputs), fc.constantFrom(...optionSets), fc.array(change, { minLength: 1, maxLength: 6 }), async ({ objects: start }, options, changes) => {
        const memo = newBuildMemo();
        let objects = start;
        const dropped: SourceObject[] = [];
        // The first build is compared too: the memo is empty then, not absent.
        for (const step of [undefined, ...changes]) {
          if (step) objects = applied(objects, dropped, step);
          const memoized = build({ objects }, options, memo);
          const fresh = build({ objects }, options);
          expect(memoized.files).toEqual(fresh.files);
          expect(memoized.diagnostics).toEqual(fresh.diagnostics);
          expect(memoized.references).toEqual(fresh.references);
          expect(memoized.ingresses).toEqual(fresh.ingresses);
          expect(memoized.certificates).toEqual(fresh.certificates);
        }
      }),
      { numRuns: 25 },
    );
  });

  it('sees a Service or Secret an Ingress reads go, and come back', async () => {
    const objects = await objectsOf('termination');
    const options = testTranslateOptions();
    for (const kind of ['Service', 'Secret']) {
      const memo = newBuildMemo();
      const gone = objects.find((o) => o.kind === kind)!;
      const without = objects.filter((o) => o !== gone);
      for (const step of [objects, without, objects]) {
        const memoized = build({ objects: step }, options, memo);
        expect(memoized.files, `${kind} ${gone.metadata.name}`).toEqual(build({ objects: step }, options).files);
        expect(memoized.diagnostics).toEqual(build({ objects: step }, options).diagnostics);
      }
    }
  });

  it('reports what an object edited in place draws, and stops when it is fixed', async () => {
    const objects = await objectsOf('termination');
    const options = testTranslateOptions();
    const memo = newBuildMemo();
    const secret = objects.find((o) => o.kind === 'Secret')!;
    const broken = { ...secret, raw: { ...secret.raw, data: { ...(secret.raw['data'] as object), 'tls.crt': 'not base64!' } } };
    const withBroken = objects.map((o) => (o === secret ? broken : o));
    for (const step of [objects, withBroken, objects]) {
      const memoized = build({ objects: step }, options, memo);
      expect(memoized.diagnostics).toEqual(build({ objects: step }, options).diagnostics);
      expect(memoized.files).toEqual(build({ objects: step }, options).files);
    }
    expect(build({ objects: withBroken }, options).diagnostics.some((d) => d.code === 'secret-data-invalid')).toBe(true);
  });

  it('sees a Service renamed in place, at the same place among the objects, to a new name or to another\'s', async () => {
    const objects = await objectsOf('termination');
    const options = testTranslateOptions();
    const memo = newBuildMemo();
    const [service, other] = objects.filter((o) => o.kind === 'Service');
    const renamedTo = (name: string) =>
      objects.map((o) => (o === service ? { ...o, metadata: { ...o.metadata, name }, raw: { ...o.raw, metadata: { ...(o.raw['metadata'] as object), name } } } : o));
    const duplicated = renamedTo(other!.metadata.name);
    for (const step of [objects, renamedTo(`${service!.metadata.name}-renamed`), objects, duplicated, objects]) {
      const memoized = build({ objects: step }, options, memo);
      expect(memoized.files).toEqual(build({ objects: step }, options).files);
      expect(memoized.diagnostics).toEqual(build({ objects: step }, options).diagnostics);
    }
  });

  it('sees a change to any Service when a claim read them all (an auth-url at an address)', async () => {
    const objects = await objectsOf('termination');
    const options = testTranslateOptions();
    const app = objects.find((o) => o.kind === 'Ingress')!;
    const annotations = { ...app.metadata.annotations, 'nginx.ingress.kubernetes.io/auth-url': 'http://10.0.0.7/check' };
    const withAuth = { ...app, metadata: { ...app.metadata, annotations }, raw: { ...app.raw, metadata: { ...(app.raw['metadata'] as object), annotations } } };
    // The address is another namespace's Service until that Service moves to another address.
    const at = (address: string) => service('elsewhere', 'auth', address, [{ port: 80 }]);
    const step = (address: string) => [...objects.map((o) => (o === app ? withAuth : o)), at(address)];
    const memo = newBuildMemo();
    for (const objects of [step('10.0.0.7'), step('10.0.0.8'), step('10.0.0.7')]) {
      const memoized = build({ objects }, options, memo);
      expect(memoized.diagnostics).toEqual(build({ objects }, options).diagnostics);
      expect(memoized.files).toEqual(build({ objects }, options).files);
    }
    const refused = (address: string) => build({ objects: step(address) }, options).diagnostics.some((d) => d.message.includes('an address of Service elsewhere/auth'));
    expect([refused('10.0.0.7'), refused('10.0.0.8')]).toEqual([true, false]);
  });

  it('sees a change to a Secret an Ingress references for its users', async () => {
    const objects = await objectsOf('annotations');
    const options = testTranslateOptions();
    const memo = newBuildMemo();
    const users = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'users')!;
    const before = build({ objects }, options, memo).files.find((f) => f.path.startsWith('auth/'));
    expect(before).toBeDefined();
    const changed = { ...users, raw: { ...users.raw, stringData: { carol: '$apr1$x$y' } } };
    const after = build({ objects: objects.map((o) => (o === users ? changed : o)) }, options, memo).files.find((f) => f.path === before!.path);
    expect(after?.contents).toBe('carol:$apr1$x$y\n');
  });
});
