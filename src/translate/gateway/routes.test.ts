import { describe, expect, it } from 'vitest';
import { upstreamName } from '../upstream-names.js';
import {
  codes,
  gateway,
  listenerStatus,
  namespaceObject,
  object,
  parentConditions,
  passthrough,
  referenceGrant,
  routeStatus,
  runPlan,
  service,
  sniRoutes,
  tlsRoute,
} from '../../../test/support/gateway.js';

const all = { allowedRoutes: { namespaces: { from: 'All' } } };
const accepted = { Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' };
const app = service('apps', 'app', '10.0.0.1', [{ port: 8443, name: 'https' }]);
const openGateway = gateway('infra', 'gw', [passthrough('tls', 443, '*.example.com', all)]);

describe('route attachment (parent Accepted)', () => {
  it('accepts a route whose hostname intersects the listener, and routes it', () => {
    const { plan, diagnostics } = runPlan([openGateway, tlsRoute('apps', 'app', { hostnames: ['app.example.com'] }), app]);
    expect(diagnostics).toEqual([]);
    const status = routeStatus(plan, 'apps', 'app');
    expect(status?.parents).toEqual([
      {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw' },
        controllerName: 'ingress2nginx.dev/controller',
        conditions: [
          expect.objectContaining({ type: 'Accepted', status: 'True', reason: 'Accepted' }),
          expect.objectContaining({ type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' }),
        ],
      },
    ]);
    expect(plan.ports).toEqual([
      {
        port: 443,
        // Other names under the listener's *.example.com are the listener's, and closed.
        isolatedHostnames: ['*.example.com'],
        routes: [
          {
            hostname: 'app.example.com',
            mode: 'Passthrough',
            listener: { gatewayNamespace: 'infra', gatewayName: 'gw', listenerName: 'tls' },
            route: { namespace: 'apps', name: 'app' },
            backends: [
              {
                upstream: upstreamName('apps_app_8443'),
                servers: [{ address: '10.0.0.1:8443' }],
                weight: 1,
                description: 'Service apps/app port 8443',
                service: { namespace: 'apps', name: 'app', port: 8443 },
              },
            ],
            rejectedWeight: 0,
            certificates: [],
          },
        ],
      },
    ]);
  });

  it('is NotAllowedByListeners from another namespace when the listener allows Same (the default)', () => {
    const { plan, diagnostics } = runPlan([gateway('infra', 'gw', [passthrough('tls', 443)]), tlsRoute('apps', 'app', { hostnames: ['a.example.com'] }), app]);
    expect(parentConditions(plan, 'apps', 'app')).toEqual({ ...accepted, Accepted: 'False/NotAllowedByListeners' });
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'not-allowed-by-listeners', field: 'spec.parentRefs[0]' })]);
    expect(sniRoutes(plan, 443)).toEqual({});
  });

  it('is NotAllowedByListeners when the listener kinds exclude TLSRoute, or the listener is not TLS', () => {
    const { plan } = runPlan([
      gateway('infra', 'gw', [
        passthrough('tls', 443, undefined, { allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'HTTPRoute' }] } }),
        { name: 'web', port: 80, protocol: 'HTTP', ...all },
      ]),
      tlsRoute('apps', 'by-kind', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'tls' }], hostnames: ['a.example.com'] }),
      tlsRoute('apps', 'by-protocol', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'web' }], hostnames: ['a.example.com'] }),
      app,
    ]);
    expect(parentConditions(plan, 'apps', 'by-kind').Accepted).toBe('False/NotAllowedByListeners');
    expect(parentConditions(plan, 'apps', 'by-protocol').Accepted).toBe('False/NotAllowedByListeners');
  });

  it('is NoMatchingListenerHostname when no hostname intersects', () => {
    const { plan, diagnostics } = runPlan([openGateway, tlsRoute('apps', 'app', { hostnames: ['app.example.net', 'example.com'] }), app]);
    expect(parentConditions(plan, 'apps', 'app')).toEqual({ ...accepted, Accepted: 'False/NoMatchingListenerHostname' });
    expect(codes(diagnostics)).toEqual(['warning:no-matching-listener-hostname']);
  });

  it.each([
    ['a Gateway missing from the input', { name: 'nope', namespace: 'infra' }],
    ['an unknown sectionName', { name: 'gw', namespace: 'infra', sectionName: 'nope' }],
    ['a port no listener uses', { name: 'gw', namespace: 'infra', port: 8443 }],
    ['a sectionName on another port', { name: 'gw', namespace: 'infra', sectionName: 'tls', port: 8443 }],
  ])('is NoMatchingParent for %s', (_what, parentRef) => {
    const { plan, diagnostics } = runPlan([openGateway, tlsRoute('apps', 'app', { parentRefs: [parentRef], hostnames: ['a.example.com'] }), app]);
    expect(parentConditions(plan, 'apps', 'app')).toEqual({ ...accepted, Accepted: 'False/NoMatchingParent' });
    expect(codes(diagnostics)).toEqual(['warning:no-matching-parent']);
  });

  it('matches parentRef sectionName and port', () => {
    const { plan } = runPlan([
      gateway('infra', 'gw', [passthrough('a', 443, 'a.example.com', all), passthrough('b', 8443, 'a.example.com', all)]),
      tlsRoute('apps', 'by-name', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'b' }], hostnames: ['a.example.com'] }),
      tlsRoute('apps', 'by-port', { parentRefs: [{ name: 'gw', namespace: 'infra', port: 443 }], hostnames: ['a.example.com'] }),
      app,
    ]);
    expect(sniRoutes(plan, 443)).toEqual({ 'a.example.com': 'apps/by-port' });
    expect(sniRoutes(plan, 8443)).toEqual({ 'a.example.com': 'apps/by-name' });
  });

  it('does not report parents that are Gateways of another class', () => {
    const theirs = gateway('infra', 'theirs', [passthrough('tls', 443)], { className: 'other' });
    const onlyTheirs = runPlan([theirs, tlsRoute('apps', 'app', { parentRefs: [{ name: 'theirs', namespace: 'infra' }], hostnames: ['a.example.com'] })]);
    expect(routeStatus(onlyTheirs.plan, 'apps', 'app')).toBeUndefined();
    expect(onlyTheirs.diagnostics).toEqual([]);

    const both = runPlan([
      theirs,
      openGateway,
      tlsRoute('apps', 'app', { parentRefs: [{ name: 'theirs', namespace: 'infra' }, { name: 'gw', namespace: 'infra' }], hostnames: ['a.example.com'] }),
      app,
    ]);
    expect(routeStatus(both.plan, 'apps', 'app')?.parents.map((p) => p.parentRef.name)).toEqual(['gw']);
  });

  it('admits namespaces by label selector over the Namespaces in the input', () => {
    const selecting = (selector: Record<string, unknown>) =>
      gateway('infra', 'gw', [passthrough('tls', 443, undefined, { allowedRoutes: { namespaces: { from: 'Selector', selector } } })]);
    const routes = [
      tlsRoute('team-a', 'r', { hostnames: ['a.example.com'], backendRefs: [{ name: 'app', port: 8443 }] }),
      tlsRoute('team-b', 'r', { hostnames: ['b.example.com'], backendRefs: [{ name: 'app', port: 8443 }] }),
      tlsRoute('unlisted', 'r', { hostnames: ['c.example.com'], backendRefs: [{ name: 'app', port: 8443 }] }),
      namespaceObject('team-a', { team: 'a' }),
      namespaceObject('team-b', { team: 'b' }),
    ];
    const byLabel = runPlan([selecting({ matchLabels: { team: 'a' } }), ...routes]);
    expect(parentConditions(byLabel.plan, 'team-a', 'r').Accepted).toBe('True/Accepted');
    expect(parentConditions(byLabel.plan, 'team-b', 'r').Accepted).toBe('False/NotAllowedByListeners');
    expect(parentConditions(byLabel.plan, 'unlisted', 'r').Accepted).toBe('False/NotAllowedByListeners');

    const byExpression = runPlan([selecting({ matchExpressions: [{ key: 'team', operator: 'Exists' }] }), ...routes]);
    expect(['team-a', 'team-b', 'unlisted'].map((ns) => parentConditions(byExpression.plan, ns, 'r').Accepted)).toEqual([
      'True/Accepted',
      'True/Accepted',
      'False/NotAllowedByListeners',
    ]);

    const byName = runPlan([selecting({ matchLabels: { 'kubernetes.io/metadata.name': 'unlisted' } }), ...routes]);
    expect(parentConditions(byName.plan, 'unlisted', 'r').Accepted).toBe('True/Accepted');
  });

  it('admits no route, with a warning, when from: Selector has no selector', () => {
    const { plan, diagnostics } = runPlan([
      gateway('infra', 'gw', [passthrough('tls', 443, undefined, { allowedRoutes: { namespaces: { from: 'Selector' } } })]),
      tlsRoute('infra', 'r', { hostnames: ['a.example.com'] }),
    ]);
    expect(parentConditions(plan, 'infra', 'r').Accepted).toBe('False/NotAllowedByListeners');
    expect(codes(diagnostics)).toContain('warning:allowed-routes-selector-invalid');
  });
});

describe('backend references (parent ResolvedRefs)', () => {
  const route = (backendRefs: Record<string, unknown>[]) => tlsRoute('apps', 'app', { hostnames: ['app.example.com'], backendRefs });

  it.each([
    ['a Service missing from the input (no DNS fallback)', [{ name: 'missing', port: 8443 }], 'BackendNotFound', 'backend-not-found'],
    ['a port the Service does not have', [{ name: 'app', port: 9999 }], 'BackendNotFound', 'backend-not-found'],
    ['another kind', [{ group: 'example.com', kind: 'Thing', name: 'app' }], 'InvalidKind', 'invalid-kind'],
    ['a Service in another namespace without ReferenceGrant', [{ name: 'app', namespace: 'backends', port: 8443 }], 'RefNotPermitted', 'ref-not-permitted'],
  ])('reports %s and closes every connection', (_what, backendRefs, reason, code) => {
    const { plan, diagnostics } = runPlan([openGateway, route(backendRefs), app, service('backends', 'app', '10.0.0.2', [{ port: 8443 }])]);
    expect(parentConditions(plan, 'apps', 'app')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: `False/${reason}` });
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'error', code, field: 'spec.rules[0].backendRefs[0]' })]);
    expect(plan.ports[0]?.routes).toEqual([expect.objectContaining({ hostname: 'app.example.com', backends: [], rejectedWeight: 1 })]);
  });

  it('resolves a Service in another namespace with a ReferenceGrant from TLSRoutes in the route namespace', () => {
    const grant = referenceGrant('backends', 'allow', [{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute', namespace: 'apps' }], [{ group: '', kind: 'Service' }]);
    const { plan, diagnostics } = runPlan([openGateway, route([{ name: 'app', namespace: 'backends', port: 8443 }]), service('backends', 'app', '10.0.0.2', [{ port: 8443 }]), grant]);
    expect(diagnostics).toEqual([]);
    expect(parentConditions(plan, 'apps', 'app')).toEqual(accepted);
    expect(plan.ports[0]?.routes[0]?.backends.map((b) => b.upstream)).toEqual([upstreamName('backends_app_8443')]);
  });

  it('splits by weight: weight 0 takes nothing, unresolved weight is closed, one Service port twice adds up', () => {
    const { plan } = runPlan([
      openGateway,
      route([
        { name: 'b', port: 8443, weight: 1 },
        { name: 'a', port: 8443, weight: 3 },
        { name: 'zero', port: 8443, weight: 0 },
        { name: 'missing', port: 8443, weight: 2 },
        { name: 'b', port: 8443 },
      ]),
      service('apps', 'a', '10.0.0.1', [{ port: 8443 }]),
      service('apps', 'b', '10.0.0.2', [{ port: 8443 }]),
      service('apps', 'zero', '10.0.0.3', [{ port: 8443 }]),
    ]);
    const entry = plan.ports[0]?.routes[0];
    // Sorted by upstream name.
    const weights: [string, number][] = [
      [upstreamName('apps_a_8443'), 3],
      [upstreamName('apps_b_8443'), 2],
    ];
    expect(entry?.backends.map((b) => [b.upstream, b.weight])).toEqual(weights.sort(([a], [b]) => (a < b ? -1 : 1)));
    expect(entry?.rejectedWeight).toBe(2);
  });

  it('rejects a Service backendRef without port as malformed', () => {
    const { plan, diagnostics } = runPlan([openGateway, route([{ name: 'app' }]), app]);
    expect(routeStatus(plan, 'apps', 'app')).toBeUndefined();
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'resource-invalid', field: 'spec.rules[0].backendRefs[0].port' })]);
  });
});

describe('hostnames and SNI entries', () => {
  it('routes only the intersections, each once', () => {
    const { plan, diagnostics } = runPlan([
      openGateway,
      tlsRoute('apps', 'app', { hostnames: ['a.example.com', 'a.example.net', '*.example.com', '*.com', 'x.y.example.com'] }),
      app,
    ]);
    expect(Object.keys(sniRoutes(plan, 443))).toEqual(['*.example.com', 'a.example.com', 'x.y.example.com']);
    expect(diagnostics).toEqual([]);
  });

  it('ignores invalid route hostnames with an error each', () => {
    const { plan, diagnostics } = runPlan([openGateway, tlsRoute('apps', 'app', { hostnames: ['a.example.com', '10.0.0.1', 'b.*.example.com'] }), app]);
    expect(Object.keys(sniRoutes(plan, 443))).toEqual(['a.example.com']);
    expect(diagnostics.map((d) => [d.severity, d.code, d.field])).toEqual([
      ['error', 'hostname-invalid', 'spec.hostnames[1]'],
      ['error', 'hostname-invalid', 'spec.hostnames[2]'],
    ]);
  });

  it('serves Passthrough and Terminate listeners on one port side by side (mixed)', () => {
    const { plan } = runPlan([
      gateway('infra', 'gw', [
        passthrough('pass', 443, '*.example.com', all),
        { name: 'term', port: 443, protocol: 'TLS', hostname: 'secure.example.com', tls: { mode: 'Terminate', certificateRefs: [{ name: 'x' }] }, ...all },
      ]),
      tlsRoute('apps', 'app', { hostnames: ['*.example.com'] }),
      app,
    ]);
    // Without a valid certificate the Terminate listener is not programmed; only the passthrough entry remains.
    expect(sniRoutes(plan, 443)).toEqual({ '*.example.com': 'apps/app' });
    expect(listenerStatus(plan, 'infra', 'gw', 'term').attachedRoutes).toBe(1);
  });
});

describe('listener isolation', () => {
  it('keeps a narrower listener hostname without routes closed, so a broader route cannot take it', () => {
    const { plan } = runPlan([
      gateway('infra', 'gw', [passthrough('broad', 443, '*.example.com', all), passthrough('narrow', 443, '*.team.example.com', all)]),
      tlsRoute('apps', 'everything', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'broad' }], hostnames: ['*.example.com'] }),
      app,
    ]);
    expect(sniRoutes(plan, 443)).toEqual({ '*.example.com': 'apps/everything' });
    expect(plan.ports[0]?.isolatedHostnames).toEqual(['*.team.example.com']);
  });

  it('gives a name under a narrower listener to that listener, not to a route of a broader one', () => {
    const { plan } = runPlan([
      gateway('infra', 'gw', [passthrough('any', 443, undefined, all), passthrough('wild', 443, '*.example.com', all)]),
      tlsRoute('apps', 'broad', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'wild' }], hostnames: ['*.example.com'] }),
      tlsRoute('apps', 'specific', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'any' }], hostnames: ['foo.example.com', 'foo.example.org'] }),
      app,
    ]);
    // foo.example.com is the wildcard listener's: its route `broad` serves it through *.example.com.
    expect(sniRoutes(plan, 443)).toEqual({ '*.example.com': 'apps/broad', 'foo.example.org': 'apps/specific' });
  });

  it('lists no hostname that a route claims', () => {
    const { plan } = runPlan([
      gateway('infra', 'gw', [passthrough('exact', 443, 'a.example.com', all)]),
      tlsRoute('apps', 'a', { hostnames: ['a.example.com'] }),
      app,
    ]);
    expect(plan.ports[0]?.isolatedHostnames).toEqual([]);
  });
});

describe('precedence for one hostname on one port', () => {
  const exactAndWildcard = gateway('infra', 'gw', [passthrough('wild', 443, '*.example.com', all), passthrough('exact', 443, 'a.example.com', all)]);

  it('prefers the more specific listener hostname over an older route', () => {
    const { plan, diagnostics } = runPlan([
      exactAndWildcard,
      tlsRoute('apps', 'old', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'wild' }], hostnames: ['a.example.com'] }, { creationTimestamp: '2020-01-01T00:00:00Z' }),
      tlsRoute('apps', 'new', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'exact' }], hostnames: ['*.example.com'] }, { creationTimestamp: '2025-01-01T00:00:00Z' }),
      app,
    ]);
    // `new` reaches only a.example.com: its *.example.com intersects the exact listener as a.example.com.
    expect(sniRoutes(plan, 443)).toEqual({ 'a.example.com': 'apps/new' });
    expect(plan.ports[0]?.routes.find((r) => r.hostname === 'a.example.com')?.listener.listenerName).toBe('exact');
    // The loser stays Accepted (the spec), and is told who won.
    expect(parentConditions(plan, 'apps', 'old')).toEqual(accepted);
    expect(diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        code: 'route-hostname-conflict',
        resource: { kind: 'TLSRoute', namespace: 'apps', name: 'old' },
        field: 'spec.hostnames[0]',
        message: expect.stringContaining('TLSRoute apps/new'),
      }),
    ]);
  });

  it('prefers the longer wildcard listener', () => {
    const { plan } = runPlan([
      gateway('infra', 'gw', [passthrough('short', 443, '*.com', all), passthrough('long', 443, '*.example.com', all)]),
      tlsRoute('apps', 'old', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'short' }], hostnames: ['a.example.com'] }, { creationTimestamp: '2020-01-01T00:00:00Z' }),
      tlsRoute('apps', 'new', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'long' }], hostnames: ['a.example.com'] }),
      app,
    ]);
    expect(sniRoutes(plan, 443)).toEqual({ 'a.example.com': 'apps/new' });
  });

  it('then prefers the older route', () => {
    const { plan, diagnostics } = runPlan([
      openGateway,
      tlsRoute('apps', 'a-new', { hostnames: ['a.example.com'] }, { creationTimestamp: '2025-01-02T00:00:00Z' }),
      tlsRoute('apps', 'z-old', { hostnames: ['a.example.com'] }, { creationTimestamp: '2025-01-01T00:00:00Z' }),
      app,
    ]);
    expect(sniRoutes(plan, 443)).toEqual({ 'a.example.com': 'apps/z-old' });
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'route-hostname-conflict', resource: expect.objectContaining({ name: 'a-new' }) })]);
  });

  it('then prefers namespace/name', () => {
    const { plan } = runPlan([
      openGateway,
      tlsRoute('b', 'app', { hostnames: ['a.example.com'] }),
      tlsRoute('a', 'zzz', { hostnames: ['a.example.com'] }),
      tlsRoute('a', 'aaa', { hostnames: ['a.example.com'] }),
      app,
    ]);
    expect(sniRoutes(plan, 443)).toEqual({ 'a.example.com': 'a/aaa' });
  });

  it('does not depend on input order', () => {
    const objects = [
      exactAndWildcard,
      tlsRoute('apps', 'one', { hostnames: ['a.example.com', 'b.example.com'] }),
      tlsRoute('apps', 'two', { hostnames: ['*.example.com'] }),
      app,
    ];
    expect(runPlan([...objects].reverse())).toEqual(runPlan(objects));
  });
});

describe('older TLSRoute versions', () => {
  const alpha2 = (name: string, spec: Record<string, unknown>) =>
    object('gateway.networking.k8s.io/v1alpha2', 'TLSRoute', 'apps', name, { spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], ...spec } });

  it('reads v1alpha2 with an info diagnostic, using the first of several rules', () => {
    const { plan, diagnostics } = runPlan([
      openGateway,
      alpha2('app', {
        hostnames: ['a.example.com'],
        rules: [{ backendRefs: [{ name: 'app', port: 8443 }] }, { backendRefs: [{ name: 'other', port: 1 }] }],
      }),
      app,
    ]);
    expect(codes(diagnostics)).toEqual(['info:api-version-deprecated', 'warning:route-rules-ignored']);
    expect(plan.ports[0]?.routes[0]?.backends.map((b) => b.upstream)).toEqual([upstreamName('apps_app_8443')]);
  });

  it('reads v1alpha3 with an info diagnostic', () => {
    const route = object('gateway.networking.k8s.io/v1alpha3', 'TLSRoute', 'apps', 'app', {
      spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['a.example.com'], rules: [{ backendRefs: [{ name: 'app', port: 8443 }] }] },
    });
    const { plan, diagnostics } = runPlan([openGateway, route, app]);
    expect(codes(diagnostics)).toEqual(['info:api-version-deprecated']);
    expect(sniRoutes(plan, 443)).toEqual({ 'a.example.com': 'apps/app' });
  });

  it('takes the listener hostname for a v1alpha2 route without hostnames, and needs one somewhere', () => {
    const rules = [{ backendRefs: [{ name: 'app', port: 8443 }] }];
    const withListenerHostname = runPlan([openGateway, alpha2('app', { rules }), app]);
    expect(sniRoutes(withListenerHostname.plan, 443)).toEqual({ '*.example.com': 'apps/app' });

    const without = runPlan([gateway('infra', 'gw', [passthrough('tls', 443, undefined, all)]), alpha2('app', { rules }), app]);
    expect(parentConditions(without.plan, 'apps', 'app').Accepted).toBe('True/Accepted');
    expect(sniRoutes(without.plan, 443)).toEqual({});
    expect(codes(without.diagnostics)).toEqual(['info:api-version-deprecated', 'warning:hostname-required']);
  });

  it('holds v1 to one rule and required hostnames', () => {
    const { diagnostics } = runPlan([
      openGateway,
      tlsRoute('apps', 'two-rules', { hostnames: ['a.example.com'], rules: [{ backendRefs: [{ name: 'app', port: 8443 }] }, { backendRefs: [{ name: 'app', port: 8443 }] }] }),
      tlsRoute('apps', 'no-hostnames', {}),
    ]);
    expect(diagnostics.map((d) => [d.code, d.resource?.name, d.field])).toEqual([
      ['resource-invalid', 'no-hostnames', 'spec.hostnames'],
      ['resource-invalid', 'two-rules', 'spec.rules'],
    ]);
  });
});
