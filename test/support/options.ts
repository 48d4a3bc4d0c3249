import type { BaseTranslateOptions, TranslateOptions } from '../../src/translate/options.js';

/**
 * The tests' one clock: every certificate check in a test happens at this time (`options.now`, `--now`),
 * so no result depends on the day the suite runs. The test PKI (pki.ts) issues certificates valid
 * around it, and around the machine's clock too, which real TLS peers in the integration tests check.
 */
export const testNowText = '2026-12-01T00:00:00Z';
export const testNow = new Date(testNowText);

/** `days` days after (or, negative, before) the tests' clock. */
export function daysFromTestNow(days: number): Date {
  return new Date(testNow.getTime() + days * 86_400_000);
}

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
  return { ...testBaseTranslateOptions(), nginxVersion: '1.22.1', now: testNow, ...overrides };
}
