/**
 * ingress-nginx annotations that we recognise but do not implement. They get an
 * `annotation-unsupported` warning rather than `annotation-unknown`, which is kept for typos.
 */
const unsupportedNames: ReadonlySet<string> = new Set([
  'app-root',
  'client-body-buffer-size',
  'connection-proxy-header',
  'custom-headers',
  'custom-http-errors',
  'default-backend',
  'disable-proxy-intercept-errors',
  'enable-access-log',
  'enable-cors',
  'enable-global-auth',
  'enable-modsecurity',
  'enable-opentelemetry',
  'enable-opentracing',
  'enable-owasp-core-rules',
  'enable-rewrite-log',
  'from-to-www-redirect',
  'http2-push-preload',
  'load-balance',
  'modsecurity-transaction-id',
  'opentelemetry-trust-incoming-span',
  'opentracing-trust-incoming-span',
  'permanent-redirect',
  'permanent-redirect-code',
  'preserve-trailing-slash',
  'proxy-body-size',
  'proxy-buffer-size',
  'proxy-buffering',
  'proxy-buffers-number',
  'proxy-connect-timeout',
  'proxy-cookie-domain',
  'proxy-cookie-path',
  'proxy-http-version',
  'proxy-max-temp-file-size',
  'proxy-next-upstream',
  'proxy-next-upstream-timeout',
  'proxy-next-upstream-tries',
  'proxy-read-timeout',
  'proxy-redirect-from',
  'proxy-redirect-to',
  'proxy-request-buffering',
  'proxy-send-timeout',
  'rewrite-target',
  'server-alias',
  'service-upstream',
  'ssl-ciphers',
  'ssl-prefer-server-ciphers',
  'temporal-redirect',
  'temporal-redirect-code',
  'upstream-hash-by',
  'upstream-vhost',
  'use-regex',
  'x-forwarded-prefix',
]);

/** Families of annotations, by the start of their names (`limit-` covers `limit-rps` and `limit-connections`). */
const unsupportedPrefixes: readonly string[] = [
  'affinity',
  'canary',
  'cors-',
  'global-rate-limit',
  'influxdb-',
  'limit-',
  'mirror-',
  'session-cookie-',
  'upstream-hash-by-',
];

/**
 * Unsupported annotations that restrict who may reach a backend. Ignoring them would silently open a
 * protected Ingress to everyone, so they are errors and the Ingress is not rendered (fail closed).
 */
const accessControlNames: ReadonlySet<string> = new Set(['whitelist-source-range', 'denylist-source-range', 'satisfy']);
const accessControlPrefixes: readonly string[] = ['auth-'];

/** `name` is without the annotation prefix. */
export function isAccessControlAnnotation(name: string): boolean {
  return accessControlNames.has(name) || accessControlPrefixes.some((prefix) => name.startsWith(prefix));
}

/** `name` is without the annotation prefix. */
export function isUnsupportedAnnotation(name: string): boolean {
  return unsupportedNames.has(name) || unsupportedPrefixes.some((prefix) => name.startsWith(prefix));
}
