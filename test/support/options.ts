import type { BaseTranslateOptions, TranslateOptions } from '../../src/translate/options.js';

/** The time the unit tests' certificates are checked at: fixed, so results never depend on the clock. */
export const unitTestNow = new Date('2026-12-01T00:00:00Z');

/** `render`'s defaults for the flags tests do not care about (what the cluster mode is given); each test overrides what it checks. */
export function testBaseTranslateOptions(overrides: Partial<BaseTranslateOptions> = {}): BaseTranslateOptions {
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
    accessLog: 'off',
    ...overrides,
  };
}

/** The base options with the nginx version of CI renders and the unit tests' clock. */
export function testTranslateOptions(overrides: Partial<TranslateOptions> = {}): TranslateOptions {
  return { ...testBaseTranslateOptions(), nginxVersion: '1.22.1', now: unitTestNow, ...overrides };
}
