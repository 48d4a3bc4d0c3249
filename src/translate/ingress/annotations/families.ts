/**
 * Every annotation we implement, by family: each family file holds its rules. Apart from the parser
 * (index.ts) so that the catalog, which the parser reads, can list the rules without an import cycle.
 */
import { affinityAnnotations } from './affinity.js';
import { backendProtocolAnnotations } from './backend-protocol.js';
import { basicAuthAnnotations } from './basic-auth.js';
import { canaryAnnotations } from './canary.js';
import { clientCertificateAnnotations } from './client-certificate.js';
import { corsAnnotations } from './cors.js';
import { customHeaderAnnotations } from './custom-headers.js';
import { directiveAnnotations } from './directive-slices.js';
import { errorAnnotations } from './errors.js';
import { authKeepaliveAnnotations, externalAuthAnnotations } from './external-auth.js';
import { fastCgiAnnotations } from './fastcgi.js';
import { loadBalancingAnnotations } from './load-balancing.js';
import { logAnnotations } from './logs.js';
import { mirrorAnnotations } from './mirror.js';
import { pathAnnotations } from './paths.js';
import { proxySslAnnotations } from './proxy-ssl.js';
import { proxyAnnotations } from './proxy.js';
import { rateLimitAnnotations } from './rate-limit.js';
import type { AnnotationRule, RuleTable } from './rule.js';
import { serverTlsAnnotations } from './server-tls.js';
import { serviceUpstreamAnnotations } from './service-upstream.js';
import { sourceRangeAnnotations } from './source-range.js';
import { sslPassthroughAnnotations } from './ssl-passthrough.js';
import { sslRedirectAnnotations } from './ssl-redirect.js';

export const families = {
  canary: canaryAnnotations,
  tls: { ...sslPassthroughAnnotations, ...sslRedirectAnnotations, ...backendProtocolAnnotations },
  proxySsl: proxySslAnnotations,
  proxy: proxyAnnotations,
  paths: pathAnnotations,
  sourceRange: sourceRangeAnnotations,
  basicAuth: basicAuthAnnotations,
  clientCertificate: clientCertificateAnnotations,
  externalAuth: externalAuthAnnotations,
  authKeepalive: authKeepaliveAnnotations,
  rateLimit: rateLimitAnnotations,
  cors: corsAnnotations,
  customHeaders: customHeaderAnnotations,
  errors: errorAnnotations,
  mirror: mirrorAnnotations,
  serverTls: serverTlsAnnotations,
  directives: directiveAnnotations,
  affinity: affinityAnnotations,
  loadBalancing: loadBalancingAnnotations,
  logs: logAnnotations,
  serviceUpstream: serviceUpstreamAnnotations,
  fastCgi: fastCgiAnnotations,
} as const;

export const allRules: readonly AnnotationRule<unknown>[] = Object.values(families).flatMap((family: RuleTable) => Object.values(family));
