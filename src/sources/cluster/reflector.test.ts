import { describe, expect, it } from 'vitest';
import { listItem, slimmed, type RawObject } from './reflector.js';

const ingressKind = { kind: 'Ingress', group: 'networking.k8s.io', version: 'v1' };

describe('listItem', () => {
  it('gives a LIST item the kind and apiVersion of its list, first as in a watch event, and keeps every other field', () => {
    const item = { metadata: { name: 'web', namespace: 'shop' }, spec: { rules: [] }, status: {} };
    const object = listItem(item, ingressKind);
    expect(object).toEqual({ kind: 'Ingress', apiVersion: 'networking.k8s.io/v1', ...item });
    expect(Object.keys(object)).toEqual(['kind', 'apiVersion', 'metadata', 'spec', 'status']);
  });

  it("takes the list's kind over one the item names, and the core group's bare version", () => {
    const object = listItem({ apiVersion: 'v0', kind: 'Other', metadata: { name: 'x' } }, { kind: 'Service', group: '', version: 'v1' });
    expect([object.apiVersion, object.kind]).toEqual(['v1', 'Service']);
  });

  it('keeps a field named __proto__ as data, as the API sent it, and sets no prototype', () => {
    const item = JSON.parse('{"metadata":{"name":"x"},"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const object = listItem(item, ingressKind);
    expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
    expect((object as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.keys(object)).toContain('__proto__');
  });
});

describe('slimmed', () => {
  const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';

  it('drops managedFields and the last applied manifest, and keeps everything else in its place', () => {
    const object = {
      kind: 'Service',
      apiVersion: 'v1',
      metadata: { name: 'app', namespace: 'web', managedFields: [{ manager: 'kubectl' }], annotations: { [lastApplied]: '{}', team: 'a' }, labels: { app: 'x' } },
      spec: { ports: [{ port: 80 }] },
    } as RawObject;
    const slim = slimmed(object);
    expect(slim).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'app', namespace: 'web', annotations: { team: 'a' }, labels: { app: 'x' } },
      spec: { ports: [{ port: 80 }] },
    });
    expect(Object.keys(slim)).toEqual(['kind', 'apiVersion', 'metadata', 'spec']);
    expect(Object.keys(slim.metadata)).toEqual(['name', 'namespace', 'annotations', 'labels']);
    expect(slim.spec).toBe(object.spec);
    expect(object.metadata).toHaveProperty('managedFields');
  });

  it('returns an object with neither as it is', () => {
    const object: RawObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'app', annotations: { team: 'a' } } } as RawObject;
    expect(slimmed(object)).toBe(object);
  });

  it('adds no annotations to an object that had none', () => {
    const slim = slimmed({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'app', managedFields: [] } } as RawObject);
    expect(slim.metadata).toEqual({ name: 'app' });
  });
});
