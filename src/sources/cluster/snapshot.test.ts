import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareStrings } from '../../model/order.js';
import type { RawObject } from './reflector.js';
import { SnapshotAssembler, sourceObject } from './snapshot.js';

/**
 * The assembler reuses the last snapshot when the stores hold objects of the same keys in the same
 * places; after any sequence of edits, adds, deletes and relists over two stores that share keys, it
 * gives what assembling everything anew gives: each key once (the later store's object), sorted.
 */

const raw = (kind: string, name: string, version: number): RawObject => ({ apiVersion: 'v1', kind, metadata: { name, namespace: 'ns', resourceVersion: String(version) } }) as RawObject;

function assembledAnew(stores: readonly ReadonlyMap<string, RawObject>[]): readonly unknown[] {
  const objects = new Map<string, RawObject>();
  for (const store of stores) for (const object of store.values()) objects.set(`${object.kind}/ns/${object.metadata.name}`, object);
  return [...objects].sort(([a], [b]) => compareStrings(a, b)).map(([, object]) => sourceObject(object));
}

const step = fc.record({
  store: fc.nat(1),
  op: fc.constantFrom('edit', 'set', 'delete', 'relist'),
  kind: fc.constantFrom('Secret', 'Ingress'),
  name: fc.constantFrom('a', 'b', 'c'),
});

describe('SnapshotAssembler', () => {
  it('gives the snapshot assembled anew after any sequence of changes', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const stores = [new Map<string, RawObject>(), new Map<string, RawObject>()];
        const assembler = new SnapshotAssembler();
        let version = 0;
        expect(assembler.assemble(stores).objects).toEqual([]);
        for (const { store: index, op, kind, name } of steps) {
          const store = stores[index]!;
          const key = `${kind}/${name}`;
          if (op === 'edit' && store.has(key)) store.set(key, raw(kind, name, ++version));
          else if (op === 'set') store.set(key, raw(kind, name, ++version));
          else if (op === 'delete') store.delete(key);
          else if (op === 'relist') stores[index] = new Map([...store].reverse());
          const objects = assembler.assemble(stores).objects;
          expect(objects).toEqual(assembledAnew(stores));
          objects.forEach((object, i) => expect(object).toBe(assembledAnew(stores)[i]));
        }
      }),
      // An edit of an object both stores hold is among them: the later store's object stays the one.
      { numRuns: 500, examples: [[[{ store: 0, op: 'set', kind: 'Secret', name: 'a' }, { store: 1, op: 'set', kind: 'Secret', name: 'a' }, { store: 0, op: 'edit', kind: 'Secret', name: 'a' }]]] },
    );
  });
});
