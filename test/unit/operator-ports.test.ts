import { describe, expect, it } from 'vitest';
import type { ListenerStatus } from '../../src/model/status.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { translate } from '../../src/translate/translate.js';
import { conditions, configMap, gateway, passthrough, service, tlsRoute } from '../support/gateway.js';
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
});
