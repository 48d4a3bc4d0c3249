import { describe, expect, it } from 'vitest';
import type { GatewayClassStatus, GatewayStatus, PolicyStatus, RouteStatus } from '../model/status.js';
import { desiredIngressStatus, desiredStatus, sameJson, withTransitions } from './status.js';

const now = new Date('2026-11-30T12:00:00.456Z');
const ctx = { controllerName: 'ingress2nginx.dev/controller', now, applied: true, addresses: [{ ip: '192.0.2.10' }] };
const accepted = { type: 'Accepted', status: 'True' as const, reason: 'Accepted', message: 'ok' };
const programmed = { type: 'Programmed', status: 'True' as const, reason: 'Programmed', message: 'ok' };

describe('withTransitions', () => {
  it('keeps lastTransitionTime while the status stays, even when reason or message change', () => {
    const current = [{ type: 'Accepted', status: 'True', reason: 'Old', message: 'old', lastTransitionTime: '2026-11-01T10:00:00Z', observedGeneration: 1 }];
    expect(withTransitions([accepted], current, 2, now)).toEqual([
      { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'ok', lastTransitionTime: '2026-11-01T10:00:00Z', observedGeneration: 2 },
    ]);
  });

  it('stamps a condition whose status changed, in seconds', () => {
    const current = [{ type: 'Accepted', status: 'False', reason: 'Old', message: 'old', lastTransitionTime: '2026-11-01T10:00:00Z' }];
    expect(withTransitions([accepted], current, 1, now)[0]?.lastTransitionTime).toBe('2026-11-30T12:00:00Z');
  });
});

describe('desiredStatus', () => {
  const gateway: GatewayStatus = {
    kind: 'Gateway',
    namespace: 'infra',
    name: 'gw',
    conditions: [accepted, programmed],
    listeners: [{ name: 'tls', attachedRoutes: 2, supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute' }], conditions: [programmed] }],
  };

  it('writes a Gateway with addresses, observedGeneration and Programmed from the apply', () => {
    const next = desiredStatus('Gateway', { metadata: { generation: 3 } }, gateway, { ...ctx, applied: false })!;
    expect(next['addresses']).toEqual([{ type: 'IPAddress', value: '192.0.2.10' }]);
    expect(next['conditions']).toEqual([
      expect.objectContaining({ type: 'Accepted', status: 'True', observedGeneration: 3 }),
      expect.objectContaining({ type: 'Programmed', status: 'False', reason: 'Pending' }),
    ]);
  });

  it('writes a GatewayClass with the generation it read, keeping the transition time of a condition that stays, and nothing for a class not ours', () => {
    const gatewayClass: GatewayClassStatus = { kind: 'GatewayClass', namespace: '', name: 'ingress2nginx', conditions: [accepted] };
    const first = desiredStatus('GatewayClass', { metadata: { generation: 1 } }, gatewayClass, ctx)!;
    expect(first['conditions']).toEqual([{ ...accepted, lastTransitionTime: '2026-11-30T12:00:00Z', observedGeneration: 1 }]);
    const later = { ...ctx, now: new Date('2026-12-01T00:00:00Z') };
    expect(desiredStatus('GatewayClass', { metadata: { generation: 1 }, status: first }, gatewayClass, later)).toBeUndefined();
    expect(desiredStatus('GatewayClass', { metadata: { generation: 2 }, status: first }, gatewayClass, later)!['conditions']).toEqual([
      { ...accepted, lastTransitionTime: '2026-11-30T12:00:00Z', observedGeneration: 2 },
    ]);
    expect(desiredStatus('GatewayClass', { metadata: { generation: 1 }, status: { conditions: [{ type: 'Accepted', status: 'Unknown' }] } }, undefined, ctx)).toBeUndefined();
  });

  it('writes nothing when the status already is that, whatever the key order the server keeps', () => {
    const first = desiredStatus('Gateway', { metadata: { generation: 3 } }, gateway, ctx)!;
    const reordered = JSON.parse(JSON.stringify(first), (_, value: unknown) =>
      value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).reverse()) : value,
    ) as Record<string, unknown>;
    expect(desiredStatus('Gateway', { metadata: { generation: 3 }, status: reordered }, gateway, { ...ctx, now: new Date() })).toBeUndefined();
  });

  it("keeps other controllers' TLSRoute parents and replaces only ours", () => {
    const theirs = { parentRef: { name: 'other' }, controllerName: 'example.com/other', conditions: [] };
    const stale = { parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gone' }, controllerName: ctx.controllerName, conditions: [] };
    const route: RouteStatus = {
      kind: 'TLSRoute',
      namespace: 'apps',
      name: 'r',
      parents: [{ parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw' }, controllerName: ctx.controllerName, conditions: [accepted] }],
    };
    const next = desiredStatus('TLSRoute', { metadata: { generation: 1 }, status: { parents: [theirs, stale] } }, route, ctx)!;
    expect((next['parents'] as { controllerName: string; parentRef: { name: string } }[]).map((p) => [p.controllerName, p.parentRef.name])).toEqual([
      ['example.com/other', 'other'],
      [ctx.controllerName, 'gw'],
    ]);
  });

  it('removes our entries from a route that is no longer ours, and leaves a route without them alone', () => {
    const ours = { parentRef: { name: 'gw' }, controllerName: ctx.controllerName, conditions: [] };
    expect(desiredStatus('TLSRoute', { status: { parents: [ours] } }, undefined, ctx)).toEqual({ parents: [] });
    expect(desiredStatus('TLSRoute', { status: { parents: [] } }, undefined, ctx)).toBeUndefined();
  });

  it("with --gateway writes only the entries of its Gateways: another data plane's entries of our controller stay as they are", () => {
    const gatewayRef = (name: string) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name });
    const others = { parentRef: gatewayRef('second'), controllerName: ctx.controllerName, conditions: [{ ...accepted, lastTransitionTime: '2026-11-01T10:00:00Z' }] };
    const route: RouteStatus = {
      kind: 'HTTPRoute',
      namespace: 'infra',
      name: 'shared',
      parents: [
        { parentRef: gatewayRef('first'), controllerName: ctx.controllerName, conditions: [accepted] },
        { parentRef: gatewayRef('missing'), controllerName: ctx.controllerName, conditions: [{ ...accepted, status: 'False', reason: 'NoMatchingParent' }] },
      ],
    };
    const scoped = { ...ctx, servedGateways: new Set(['infra/first']) };
    const next = desiredStatus('HTTPRoute', { metadata: { namespace: 'infra', generation: 1 }, status: { parents: [others] } }, route, scoped)!;
    expect(next['parents']).toEqual([others, expect.objectContaining({ parentRef: gatewayRef('first') })]);
    // A parentRef without namespace names the route's own; its entry is this data plane's to remove.
    const dropped = desiredStatus('HTTPRoute', { metadata: { namespace: 'infra' }, status: { parents: [{ parentRef: { name: 'first' }, controllerName: ctx.controllerName, conditions: [] }] } }, undefined, scoped);
    expect(dropped).toEqual({ parents: [] });
    expect(desiredStatus('Gateway', { metadata: { namespace: 'infra', name: 'second' } }, undefined, scoped)).toBeUndefined();
  });

  it('writes BackendTLSPolicy ancestors under ancestorRef', () => {
    const policy: PolicyStatus = {
      kind: 'BackendTLSPolicy',
      namespace: 'apps',
      name: 'p',
      ancestors: [{ ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw' }, controllerName: ctx.controllerName, conditions: [accepted] }],
    };
    const next = desiredStatus('BackendTLSPolicy', { metadata: { generation: 1 } }, policy, ctx)!;
    expect(next['ancestors']).toEqual([expect.objectContaining({ ancestorRef: expect.objectContaining({ name: 'gw' }) })]);
    expect(JSON.stringify(next)).not.toContain('parentRef');
  });
});

describe('desiredIngressStatus', () => {
  it('sets the addresses on an Ingress of ours, and writes nothing once they are there', () => {
    const next = desiredIngressStatus({}, true, [{ ip: '192.0.2.10' }, { hostname: 'lb.example.test' }])!;
    expect(next).toEqual({ loadBalancer: { ingress: [{ ip: '192.0.2.10' }, { hostname: 'lb.example.test' }] } });
    expect(desiredIngressStatus({ status: next }, true, [{ ip: '192.0.2.10' }, { hostname: 'lb.example.test' }])).toBeUndefined();
  });

  it('clears our addresses from an Ingress that is no longer ours, but not addresses another controller wrote', () => {
    const ours = { status: { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } } };
    expect(desiredIngressStatus(ours, false, [{ ip: '192.0.2.10' }])).toEqual({ loadBalancer: { ingress: [] } });
    expect(desiredIngressStatus({ status: { loadBalancer: { ingress: [{ ip: '198.51.100.1' }] } } }, false, [{ ip: '192.0.2.10' }])).toBeUndefined();
  });
});

describe('sameJson', () => {
  it('ignores key order and undefined fields, not values or list order', () => {
    expect(sameJson({ a: 1, b: { c: 2, d: undefined } }, { b: { c: 2 }, a: 1 })).toBe(true);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
  });
});

