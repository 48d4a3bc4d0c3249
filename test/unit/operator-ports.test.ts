import { describe, expect, it } from 'vitest';
import type { ListenerStatus } from '../../src/model/status.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { translate } from '../../src/translate/translate.js';
import { listenedPorts } from '../../src/build/listen-ports.js';
import { conditions, configMap, gateway, object, passthrough, service, terminate, tlsRoute, v1 } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * Operator configuration outranks tenants on ports (issue 37, defects 3 and 4): a Gateway listener on a
 * port the TCP services ConfigMap gives out, or on a port the Pod already uses, is not accepted; the
 * operator's entry is served.
 */

const tcp = configMap('ingress-nginx', 'tcp-services', { '5432': 'db/pg:5432' });
const objects: SourceObject[] = [
  service('db', 'pg', '10.0.0.5', [{ port: 5432 }]),
  service('tenant', 'app', '10.0.0.6', [{ port: 8443 }]),
  tcp,
  gateway('tenant', 'gw', [passthrough('takes-pg', 5432), passthrough('takes-metrics', 10254), passthrough('fine', 9443)]),
  tlsRoute('tenant', 'route', { parentRefs: [{ name: 'gw' }], hostnames: ['app.example.test'], rules: [{ backendRefs: [{ name: 'app', port: 8443 }] }] }),
];

const build = (extra: Parameters<typeof testTranslateOptions>[0] = {}) =>
  translate({ objects }, testTranslateOptions({ tcpServicesConfigMap: 'ingress-nginx/tcp-services', ...extra }));

function listener(result: ReturnType<typeof build>, name: string): ListenerStatus {
  const status = result.statuses.find((s) => s.kind === 'Gateway' && s.name === 'gw');
  const found = status?.kind === 'Gateway' ? status.listeners.find((l) => l.name === name) : undefined;
  if (!found) throw new Error(`no status for listener ${name}`);
  return found;
}

describe('ports the operator holds', () => {
  it('a TCP service keeps its port and a tenant listener on it is not accepted (PortUnavailable)', () => {
    const result = build();
    expect(result.model.stream.services.map((s) => s.port)).toEqual([5432]);
    expect(result.model.stream.frontends.map((f) => f.port)).not.toContain(5432);
    expect(result.diagnostics.filter((d) => d.code === 'stream-service-port-clash')).toEqual([]);
    expect(conditions(listener(result, 'takes-pg').conditions)).toMatchObject({ Accepted: 'False/PortUnavailable', Programmed: 'False/Invalid' });
    expect(listener(result, 'takes-pg').conditions.find((c) => c.type === 'Accepted')?.message).toMatch(/TCP service port of ConfigMap ingress-nginx\/tcp-services/);
    expect(result.diagnostics).toContainEqual(expect.objectContaining({ code: 'port-unavailable', resource: { kind: 'Gateway', namespace: 'tenant', name: 'gw' } }));
    expect(conditions(listener(result, 'fine').conditions)).toMatchObject({ Accepted: 'True/Accepted', Programmed: 'True/Programmed' });
  });

  it("refuses the Pod's own ports to a listener and to a TCP service", () => {
    const reservedPorts = new Map([[10254, "the sidecar's metrics port (--metrics-address)"]]);
    const withEntry = configMap('ingress-nginx', 'tcp-services', { '5432': 'db/pg:5432', '10254': 'db/pg:5432' });
    const result = translate(
      { objects: objects.map((o) => (o === tcp ? withEntry : o)) },
      testTranslateOptions({ tcpServicesConfigMap: 'ingress-nginx/tcp-services', reservedPorts }),
    );
    expect(conditions(listener(result, 'takes-metrics').conditions)).toMatchObject({ Accepted: 'False/PortUnavailable' });
    expect(listener(result, 'takes-metrics').conditions.find((c) => c.type === 'Accepted')?.message).toMatch(/metrics port/);
    const ports = [...result.model.stream.frontends.map((f) => f.port), ...result.model.stream.services.map((s) => s.port)];
    expect(ports).not.toContain(10254);
    expect(result.diagnostics).toContainEqual(expect.objectContaining({ code: 'stream-service-port-clash', field: 'data["10254"]', message: expect.stringMatching(/metrics port/) }));
  });

  // Every kind of port the operator holds, against a listener of every protocol: a tenant's Gateway never
  // takes it, however old, and nginx binds it only for the operator's own service (or not at all).
  const operatorPorts = [
    { port: 5432, what: /TCP service port of ConfigMap ingress-nginx\/tcp-services/, boundBy: 'tcp' },
    { port: 5353, what: /UDP service port of ConfigMap ingress-nginx\/udp-services/, boundBy: 'udp' },
    { port: 10254, what: /metrics and probes port/, boundBy: undefined },
    { port: 8443, what: /admission webhook port/, boundBy: undefined },
  ] as const;
  const listenersOn = (port: number) => [
    { name: 'http', port, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
    { name: 'https', port, protocol: 'HTTPS', hostname: 'https.example.test', tls: { certificateRefs: [{ name: 'cert' }] } },
    passthrough('passthrough', port, 'passthrough.example.test'),
    terminate('terminate', port, 'terminate.example.test', [{ name: 'cert' }]),
  ];

  it.each(operatorPorts)('no listener of any protocol takes port $port ($boundBy), and nginx binds it only for the operator', ({ port, what, boundBy }) => {
    const result = translate(
      {
        objects: [
          service('db', 'pg', '10.0.0.5', [{ port: 5432 }]),
          service('tenant', 'app', '10.0.0.6', [{ port: 80 }]),
          configMap('ingress-nginx', 'tcp-services', { '5432': 'db/pg:5432' }),
          object('v1', 'Service', 'db', 'dns', { spec: { clusterIP: '10.0.0.7', ports: [{ port: 53, protocol: 'UDP' }] } }),
          configMap('ingress-nginx', 'udp-services', { '5353': 'db/dns:53' }),
          gateway('tenant', 'gw', listenersOn(port), { creationTimestamp: '2000-01-01T00:00:00Z' }),
          object(v1, 'HTTPRoute', 'tenant', 'app', { spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'app', port: 80 }] }] } }),
        ],
      },
      testTranslateOptions({
        tcpServicesConfigMap: 'ingress-nginx/tcp-services',
        udpServicesConfigMap: 'ingress-nginx/udp-services',
        reservedPorts: new Map([
          [10254, "the sidecar's metrics and probes port (--metrics-address :10254)"],
          [8443, "the sidecar's admission webhook port (--validating-webhook :8443)"],
        ]),
      }),
    );
    for (const name of ['http', 'https', 'passthrough', 'terminate']) {
      const refused = listener(result, name).conditions;
      expect(conditions(refused), name).toMatchObject({ Accepted: 'False/PortUnavailable', Programmed: 'False/Invalid' });
      expect(refused.find((c) => c.type === 'Accepted')?.message, name).toMatch(what);
    }
    expect(result.model.http.ownPorts ?? []).toEqual([]);
    expect(result.model.stream.frontends.map((f) => f.port)).not.toContain(port);
    const bound = listenedPorts(result.model).filter((p) => p.port === port).map((p) => p.protocol);
    expect(bound).toEqual(boundBy === undefined ? [] : [boundBy]);
  });
});
