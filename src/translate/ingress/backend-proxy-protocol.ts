import type { FieldPath } from '../../model/diagnostics.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { describeRejectedValue } from '../checks/allowlist.js';
import type { NginxFeatures } from '../nginx-version.js';
import { type Reporter } from '../report.js';
import type { ProxyProtocolVersion } from '../settle/claims.js';

/**
 * `ingress2nginx.dev/backend-proxy-protocol: "v1" | "v2"` (ours, not ingress-nginx's): the passthrough
 * backends of this Ingress get a PROXY protocol header with the client's address before the TLS bytes.
 *
 * What stock nginx can send (read in its source): the stream module's `proxy_protocol on` writes version 1
 * (`ngx_proxy_protocol_write`, text); `proxy_protocol v2` exists from nginx 1.31.4 on
 * (`ngx_proxy_protocol_v2_write`). Before that, "v2" cannot be honoured: it is an error, never a silent v1.
 */
export const backendProxyProtocolAnnotation = 'ingress2nginx.dev/backend-proxy-protocol';

export const backendProxyProtocolField: FieldPath = ['metadata', 'annotations', backendProxyProtocolAnnotation];

/**
 * The version an Ingress asks for, or `undefined` without the annotation. A value that cannot be honoured
 * is an error, and, as with the ingress-nginx annotations, the Ingress is not rendered until it is fixed
 * (`false`): a backend that expects a header would otherwise misread every connection.
 */
export function requestedProxyProtocol(
  object: SourceObject,
  features: NginxFeatures,
  report: Reporter,
): ProxyProtocolVersion | undefined | false {
  const raw = object.metadata.annotations[backendProxyProtocolAnnotation];
  if (raw === undefined) return undefined;
  const value = raw.trim().toLowerCase();
  if (value === 'v1') return 'v1';
  if (value === 'v2' && features.proxyProtocolV2) return 'v2';
  if (value === 'v2') {
    report.error(
      'backend-proxy-protocol-unsupported',
      object,
      'PROXY protocol v2 to backends needs nginx 1.31.4 or later (stream "proxy_protocol v2"); the nginx this config is rendered for (--nginx-version) writes version 1 only. Use "v1" (servers that read PROXY headers mostly accept both versions), or render for a newer nginx',
      backendProxyProtocolField,
    );
  } else {
    report.error(
      'backend-proxy-protocol-invalid',
      object,
      `${backendProxyProtocolAnnotation} must be "v1" or "v2" (it ${describeRejectedValue(raw)})`,
      backendProxyProtocolField,
    );
  }
  report.error(
    'ingress-skipped',
    object,
    'this Ingress is not rendered until its annotation errors are fixed, so that no half-applied setting reaches nginx',
  );
  return false;
}

