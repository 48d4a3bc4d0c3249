import type { TranslateOptions } from '../../src/translate/options.js';

/** The time the unit tests' certificates are checked at: fixed, so results never depend on the clock. */
export const unitTestNow = new Date('2026-12-01T00:00:00Z');

/** `render`'s defaults for the options tests do not care about; each test overrides what it checks. */
export function testTranslateOptions(overrides: Partial<TranslateOptions> = {}): TranslateOptions {
  return {
    ingressClass: 'nginx',
    gatewayClass: 'ingress2nginx',
    systemCaBundle: '/etc/ssl/certs/ca-certificates.crt',
    watchIngressWithoutClass: false,
    allowCrossNamespaceSecrets: false,
    clusterDomain: 'cluster.local',
    httpPort: 80,
    httpsPort: 443,
    runDir: '/run/i2n',
    nginxVersion: '1.22.1',
    accessLog: 'off',
    now: unitTestNow,
    ...overrides,
  };
}
