import { describe, expect, it } from 'vitest';
import { build } from '../../build/build.js';
import type { RouteStatus } from '../../model/status.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { conditions, gateway, listenerStatus, object, runPlan, service, v1, type Meta } from '../../../test/support/gateway.js';
import { testTranslateOptions } from '../../../test/support/options.js';
import { methodPath } from './grpc-routes.js';
import { pathConflictCondition } from './http-routes.js';

/** GRPCRoute: read, validated, matched as HTTP/2 paths, attached, and settled against HTTPRoutes. */

const edge = gateway('infra', 'edge', [
  { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
  { name: 'grpc-only', port: 80, protocol: 'HTTP', hostname: 'only.example.com', allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'GRPCRoute' }] } },
]);
const echo = service('apps', 'echo', '10.0.0.1', [{ port: 50051 }]);
const ports = { httpPort: 80, httpsPort: 443, cleartextHttp2: true };

function grpcRoute(name: string, spec: Record<string, unknown>, meta: Meta = {}): SourceObject {
  return object(v1, 'GRPCRoute', 'apps', name, { spec: { parentRefs: [{ name: 'edge', namespace: 'infra', sectionName: 'http' }], ...spec } }, meta);
}

function httpRoute(name: string, spec: Record<string, unknown>, meta: Meta = {}): SourceObject {
  return object(v1, 'HTTPRoute', 'apps', name, { spec: { parentRefs: [{ name: 'edge', namespace: 'infra', sectionName: 'http' }], ...spec } }, meta);
}

const toEcho = { backendRefs: [{ name: 'echo', port: 50051 }] };

function parentOf(statuses: readonly { kind: string; name: string }[], kind: string, name: string): Record<string, string> {
  const status = statuses.find((s): s is RouteStatus => s.kind === kind && s.name === name);
  return conditions(status?.parents[0]?.conditions ?? []);
}

function render(objects: readonly SourceObject[], nginxVersion = '1.28.2') {
  const result = build({ objects }, testTranslateOptions({ nginxVersion }));
  return { conf: result.files.find((f) => f.path === 'nginx.conf')?.contents ?? '', diagnostics: result.diagnostics, statuses: result.statuses };
}

describe('a gRPC method match as the HTTP/2 path /<service>/<method>', () => {
  it('is an Exact path for service and method, the service prefix for a service alone, a one-segment regex otherwise', () => {
    expect(methodPath({ service: 'echo.v1.Echo', method: 'Ping' })).toEqual({ type: 'Exact', value: '/echo.v1.Echo/Ping' });
    expect(methodPath({ type: 'Exact', service: 'echo.v1.Echo' })).toEqual({ type: 'PathPrefix', value: '/echo.v1.Echo' });
    expect(methodPath({ method: 'Ping' })).toEqual({ type: 'RegularExpression', value: '/[^/]+/Ping' });
    expect(methodPath({ type: 'RegularExpression', service: 'echo\\.v[12]\\..*', method: 'P.*' })).toEqual({ type: 'RegularExpression', value: '/(?:echo\\.v[12]\\..*)/(?:P.*)' });
    expect(methodPath({ type: 'RegularExpression', service: '', method: 'Ping' })).toEqual({ type: 'RegularExpression', value: '/[^/]+/(?:Ping)' });
  });

  it('renders grpc_pass with the method path as location and headers as conditions', () => {
    const route = grpcRoute('echo', {
      hostnames: ['echo.example.com'],
      rules: [
        { matches: [{ method: { service: 'echo.v1.Echo', method: 'Ping' } }], ...toEcho },
        { matches: [{ method: { service: 'echo.v1.Echo' }, headers: [{ name: 'version', value: '2' }] }], ...toEcho },
      ],
    });
    const { conf, diagnostics } = render([edge, echo, route]);
    expect(diagnostics).toEqual([]);
    expect(conf).toMatch(/location = \/echo\.v1\.Echo\/Ping \{[^}]*grpc_pass grpc:\/\/\w\w_apps_echo_50051;/);
    expect(conf).toMatch(/map \$http_version \$\w+ \{\n\s+"~\^2\$" 1;/);
    expect(conf).not.toContain('proxy_pass http://');
  });
});

describe('GRPCRoute RequestMirror', () => {
  it('copies each call over HTTP/2 to the call\'s own path, with the mirror\'s answer dropped', () => {
    const mirror = service('apps', 'mirror', '10.0.0.9', [{ port: 50051 }]);
    const route = grpcRoute('mirrored', {
      hostnames: ['mirror.example.com'],
      rules: [{ filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'mirror', port: 50051 } } }], ...toEcho }],
    });
    const { conf, diagnostics } = render([edge, echo, mirror, route]);
    expect(diagnostics).toEqual([]);
    expect(conf).toMatch(/mirror (\/\.ingress2nginx\/route-mirror\/\w+);\n\s+mirror_request_body on;\n\s+grpc_pass grpc:\/\/\w\w_apps_echo_50051;/);
    expect(conf).toMatch(/location = \/\.ingress2nginx\/route-mirror\/\w+ \{\n\s+internal;\n(\s+#[^\n]*\n)?\s+rewrite \^ \$request_uri break;\n\s+grpc_set_header Host \$host;\n\s+grpc_pass grpc:\/\/\w\w_apps_mirror_50051;/);
  });
});

describe('GRPCRoute backends that cannot be used', () => {
  it('weighs their share onto a server that answers 503 over HTTP/2, as the grpc module speaks', () => {
    const route = grpcRoute('half', { hostnames: ['half.example.com'], rules: [{ backendRefs: [{ name: 'echo', port: 50051 }, { name: 'absent', port: 50051 }] }] });
    // (nginx 1.22, through HTTPS listeners, writes `listen unix:… http2` instead: the traffic tests run it.)
    const { conf } = render([edge, echo, route]);
    const socket = /listen unix:(\S+grpc-503\.sock);\n\s+http2 on;\n\s+return 503;/.exec(conf)?.[1];
    expect(socket).toBeDefined();
    expect(conf).toContain(`server unix:${socket} weight=1;`);
    expect(conf).not.toContain('http-500.sock');
  });
});

describe('GRPCRoute validation (the CRD rules, for manifests that have not been through an API server)', () => {
  it.each([
    ['a method match with neither service nor method', { method: {} }],
    ['an Exact service that is not a dotted identifier', { method: { service: 'echo/v1', method: 'Ping' } }],
    ['an Exact method that is not an identifier', { method: { service: 'echo.v1.Echo', method: 'Pi-ng' } }],
    ['a header match type GRPCRoute has not', { headers: [{ name: 'version', value: '1', type: 'Prefix' }] }],
  ])('refuses %s, and the route is not served', (_, match) => {
    const { conf, diagnostics } = render([edge, echo, grpcRoute('bad', { hostnames: ['bad.example.com'], rules: [{ matches: [match], ...toEcho }] })]);
    expect(diagnostics.map((d) => d.code)).toContain('resource-invalid');
    expect(conf).not.toContain('bad.example.com');
  });

  it('refuses HTTPRoute filters a GRPCRoute does not have (URLRewrite)', () => {
    const { diagnostics } = render([edge, echo, grpcRoute('bad', { rules: [{ filters: [{ type: 'URLRewrite', urlRewrite: {} }], ...toEcho }] })]);
    expect(diagnostics.map((d) => d.code)).toContain('resource-invalid');
  });

  it('reports an unsafe method regex at the method, and serves the other matches', () => {
    const route = grpcRoute('regex', {
      hostnames: ['regex.example.com'],
      rules: [{ matches: [{ method: { type: 'RegularExpression', method: '(a+)+' } }, { method: { service: 'echo.v1.Echo' } }], ...toEcho }],
    });
    const { conf, diagnostics, statuses } = render([edge, echo, route]);
    const unsupported = diagnostics.find((d) => d.code === 'httproute-match-unsupported');
    expect(unsupported?.path).toEqual(['spec', 'rules', 0, 'matches', 0, 'method']);
    expect(conf).toContain('location = /echo.v1.Echo {');
    expect(parentOf(statuses, 'GRPCRoute', 'regex')).toMatchObject({ Accepted: 'True/Accepted', PartiallyInvalid: 'True/UnsupportedValue' });
  });
});

describe('GRPCRoute status', () => {
  it('lists GRPCRoute among the kinds of HTTP and HTTPS listeners, accepts a listener that names it, and counts attached routes by kind', () => {
    const { plan, diagnostics } = runPlan(
      [
        edge,
        echo,
        grpcRoute('same-name', { hostnames: ['a.example.com'], rules: [toEcho] }),
        httpRoute('same-name', { hostnames: ['b.example.com'], rules: [toEcho] }),
        grpcRoute('only', { parentRefs: [{ name: 'edge', namespace: 'infra', sectionName: 'grpc-only' }], rules: [toEcho] }),
        httpRoute('refused', { parentRefs: [{ name: 'edge', namespace: 'infra', sectionName: 'grpc-only' }], rules: [toEcho] }),
      ],
      ports,
    );
    const grpcKind = { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' };
    expect(listenerStatus(plan, 'infra', 'edge', 'http').supportedKinds).toEqual([{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }, grpcKind]);
    expect(listenerStatus(plan, 'infra', 'edge', 'grpc-only').supportedKinds).toEqual([grpcKind]);
    expect(conditions(listenerStatus(plan, 'infra', 'edge', 'grpc-only').conditions)).toMatchObject({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    // An HTTPRoute and a GRPCRoute of one name are two routes.
    expect(listenerStatus(plan, 'infra', 'edge', 'http').attachedRoutes).toBe(2);
    expect(parentOf(plan.statuses, 'GRPCRoute', 'only')).toMatchObject({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    expect(parentOf(plan.statuses, 'HTTPRoute', 'refused')).toMatchObject({ Accepted: 'False/NotAllowedByListeners' });
    expect(diagnostics.map((d) => d.code)).toEqual(['not-allowed-by-listeners']);
  });

  it('says NoMatchingListenerHostname, BackendNotFound, RefNotPermitted and InvalidKind, each with a diagnostic', () => {
    const { plan, diagnostics } = runPlan(
      [
        edge,
        echo,
        grpcRoute('elsewhere', { parentRefs: [{ name: 'edge', namespace: 'infra', sectionName: 'grpc-only' }], hostnames: ['other.example.org'], rules: [toEcho] }),
        grpcRoute('missing', { rules: [{ backendRefs: [{ name: 'absent', port: 50051 }] }] }),
        grpcRoute('foreign', { rules: [{ backendRefs: [{ name: 'echo', namespace: 'other', port: 50051 }] }] }),
        grpcRoute('bucket', { rules: [{ backendRefs: [{ group: 'example.com', kind: 'Bucket', name: 'b' }] }] }),
      ],
      ports,
    );
    expect(parentOf(plan.statuses, 'GRPCRoute', 'elsewhere')).toMatchObject({ Accepted: 'False/NoMatchingListenerHostname' });
    expect(parentOf(plan.statuses, 'GRPCRoute', 'missing')).toMatchObject({ Accepted: 'True/Accepted', ResolvedRefs: 'False/BackendNotFound' });
    expect(parentOf(plan.statuses, 'GRPCRoute', 'foreign')).toMatchObject({ ResolvedRefs: 'False/RefNotPermitted' });
    expect(parentOf(plan.statuses, 'GRPCRoute', 'bucket')).toMatchObject({ ResolvedRefs: 'False/InvalidKind' });
    expect(diagnostics.map((d) => d.code).sort()).toEqual(['backend-not-found', 'invalid-kind', 'no-matching-listener-hostname', 'ref-not-permitted']);
  });

  it('does not attach to HTTP listeners for an nginx without cleartext HTTP/2 beside HTTP/1.x (UnsupportedValue)', () => {
    const route = grpcRoute('plain', { hostnames: ['plain.example.com'], rules: [toEcho] });
    const old = render([edge, echo, route], '1.22.1');
    expect(parentOf(old.statuses, 'GRPCRoute', 'plain')).toMatchObject({ Accepted: 'False/UnsupportedValue' });
    expect(old.diagnostics.map((d) => d.code)).toEqual(['unsupported-value']);
    expect(old.conf).not.toContain('plain.example.com');
    expect(old.conf).not.toContain('http2 on;');
    const current = render([edge, echo, route]);
    expect(parentOf(current.statuses, 'GRPCRoute', 'plain')).toMatchObject({ Accepted: 'True/Accepted' });
    // Every plain server takes HTTP/2 with prior knowledge: the default one decides per port, the named one would answer 421.
    expect(current.conf).toMatch(/listen 80 default_server;\n\s+server_name _;\n(\s+#[^\n]*\n)?\s+http2 on;/);
    expect(current.conf).toMatch(/server_name plain\.example\.com;\n(\s+#[^\n]*\n)?\s+http2 on;/);
  });
});

describe('a GRPCRoute and an older Ingress on one host and path', () => {
  it('leaves the path to the Ingress, and the route\'s parents say where it went', () => {
    const ingress = object(
      'networking.k8s.io/v1',
      'Ingress',
      'apps',
      'shop',
      { spec: { ingressClassName: 'nginx', rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { number: 50051 } } } }] } }] } },
      { creationTimestamp: '2020-01-01T00:00:00Z' },
    );
    const route = grpcRoute('shop', { hostnames: ['shop.example.com'], rules: [toEcho] }, { creationTimestamp: '2024-01-01T00:00:00Z' });
    const { conf, statuses } = render([edge, echo, ingress, route]);
    expect(conf).not.toContain('grpc_pass');
    expect(parentOf(statuses, 'GRPCRoute', 'shop')).toMatchObject({ Accepted: 'True/Accepted', [pathConflictCondition]: 'True/PathConflict' });
  });
});

describe('an HTTPRoute and a GRPCRoute on one listener and host name', () => {
  const grpc = grpcRoute('api', { hostnames: ['api.example.com'], rules: [toEcho] }, { creationTimestamp: '2024-01-01T00:00:00Z' });
  const http = httpRoute('web', { hostnames: ['*.example.com'], rules: [toEcho] }, { creationTimestamp: '2024-06-01T00:00:00Z' });

  it('accepts the older one only, in any input order', () => {
    for (const objects of [
      [edge, echo, grpc, http],
      [http, grpc, echo, edge],
    ]) {
      const { plan, diagnostics } = runPlan(objects, ports);
      expect(parentOf(plan.statuses, 'GRPCRoute', 'api')).toMatchObject({ Accepted: 'True/Accepted' });
      expect(parentOf(plan.statuses, 'HTTPRoute', 'web')).toMatchObject({ Accepted: 'False/NotAllowedByListeners' });
      expect(diagnostics.map((d) => d.message)).toEqual([expect.stringContaining('listener http carries GRPCRoute apps/api')]);
      expect(listenerStatus(plan, 'infra', 'edge', 'http').attachedRoutes).toBe(1);
    }
  });

  it('lets the older HTTPRoute win, and both serve when their host names do not meet', () => {
    const older = httpRoute('web', { hostnames: ['*.example.com'], rules: [toEcho] }, { creationTimestamp: '2023-01-01T00:00:00Z' });
    const { plan } = runPlan([edge, echo, grpc, older], ports);
    expect(parentOf(plan.statuses, 'GRPCRoute', 'api')).toMatchObject({ Accepted: 'False/NotAllowedByListeners' });
    const apart = runPlan([edge, echo, grpc, httpRoute('web', { hostnames: ['www.example.org'], rules: [toEcho] })], ports);
    expect(parentOf(apart.plan.statuses, 'GRPCRoute', 'api')).toMatchObject({ Accepted: 'True/Accepted' });
    expect(parentOf(apart.plan.statuses, 'HTTPRoute', 'web')).toMatchObject({ Accepted: 'True/Accepted' });
  });
});
