import type { SourceObject } from '../../sources/snapshot.js';
import type { Reporter } from '../report.js';
import type { ControllerSettings } from './configmap.js';

/** CIDRs that hold every address of their family. */
const everyAddress = new Set(['0.0.0.0/0', '::/0']);

/**
 * With `use-forwarded-headers` (or `use-proxy-protocol`) on, nginx takes the client address from what
 * the peer sends, but only from peers in `proxy-real-ip-cidr`; its default, as in ingress-nginx, trusts
 * every peer, so any client names its own address and passes `whitelist-source-range`, escapes
 * `denylist-source-range` and the `limit-*` keys, and writes the access log's address. ingress-nginx
 * says nothing; we warn at the key that turned it on.
 */
export function forwardedTrustWarnings(settings: ControllerSettings, configMap: SourceObject, report: Reporter): void {
  const trustsAll = settings.proxyRealIpCidr.filter((cidr) => everyAddress.has(cidr));
  if (trustsAll.length === 0) return;
  const trusted = `proxy-real-ip-cidr trusts every peer (${trustsAll.join(', ')}${trustsAll.length === settings.proxyRealIpCidr.length ? ', the default' : ''})`;
  const effect =
    'so any client that reaches nginx directly chooses the address nginx sees: it passes whitelist-source-range, escapes denylist-source-range and the limit-* keys, and is logged as whom it likes; set proxy-real-ip-cidr to the addresses of the load balancers in front';
  if (settings.useForwardedHeaders) {
    report.warning('forwarded-headers-trust-all', configMap, `use-forwarded-headers is on and ${trusted}: X-Forwarded-For is taken from anyone, ${effect}`, ['data', 'use-forwarded-headers']);
  }
  if (settings.useProxyProtocol) {
    report.warning('forwarded-headers-trust-all', configMap, `use-proxy-protocol is on and ${trusted}: a PROXY header is taken from anyone, ${effect}`, ['data', 'use-proxy-protocol']);
  }
}
