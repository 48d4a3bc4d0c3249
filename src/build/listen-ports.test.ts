import { describe, expect, it } from 'vitest';
import { build } from './build.js';
import { addedPorts, busyPortProblem, listenedPorts } from './listen-ports.js';
import { configMap, gateway, passthrough, service } from '../../test/support/gateway.js';
import { testTranslateOptions } from '../../test/support/options.js';

/** The ports a config binds, which the cluster mode probes when a reload fails though nginx -t passed. */
describe('listenedPorts', () => {
  const model = build(
    {
      objects: [
        service('db', 'pg', '10.0.0.5', [{ port: 5432 }]),
        configMap('infra', 'tcp', { '5432': 'db/pg:5432' }),
        gateway('tenant', 'gw', [passthrough('tls', 9443)]),
      ],
    },
    testTranslateOptions({ httpPort: 8080, httpsPort: 8443, tcpServicesConfigMap: 'infra/tcp' }),
  ).model;

  it('lists HTTP, HTTPS, the SNI fronts and the TCP services, each once, sorted; no unix socket', () => {
    expect(listenedPorts(model)).toEqual([
      { port: 5432, protocol: 'tcp' },
      { port: 8080, protocol: 'tcp' },
      { port: 8443, protocol: 'tcp' },
      { port: 9443, protocol: 'tcp' },
    ]);
  });

  it('finds what a config adds to the one nginx serves, and names the port another process holds', () => {
    const served = [{ port: 8080, protocol: 'tcp' as const }, { port: 8443, protocol: 'tcp' as const }];
    expect(addedPorts(listenedPorts(model), served)).toEqual([
      { port: 5432, protocol: 'tcp' },
      { port: 9443, protocol: 'tcp' },
    ]);
    expect(busyPortProblem(model, [{ port: 9443, protocol: 'tcp' }])).toMatch(/^port 9443 \(tcp\) is in use by another process/);
    expect(busyPortProblem(model, [{ port: 9443, protocol: 'udp' }])).toBeUndefined();
  });
});
