/**
 * Header names no tenant may set, add or remove, request or response, Ingress or Gateway: the ones that
 * frame a message or belong to one connection (RFC 9110 §7.6.1). nginx writes them itself; one more
 * beside its own (two `Content-Length`, or one with `Transfer-Encoding`) lets whoever shares the
 * connection next — a CDN or load balancer in front, the upstream keep-alive pool behind — read the
 * stream differently from nginx.
 */

const framingHeaders: ReadonlySet<string> = new Set(['connection', 'content-length', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * `Proxy-*` (credentials for one hop) and `Proxy` itself (CGI turns it into `HTTP_PROXY`: httpoxy);
 * on requests, `Host` too: nginx sends its own, a second one names another virtual host to the backend.
 */
export function isReservedHeader(name: string, direction: 'request' | 'response'): boolean {
  const lower = name.toLowerCase();
  if (framingHeaders.has(lower) || lower === 'proxy' || lower.startsWith('proxy-')) return true;
  return direction === 'request' && lower === 'host';
}

/** The reason, for diagnostics. */
export const reservedHeaderText = 'is a hop-by-hop or framing header (Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer, Proxy-*; Host on requests), which nginx writes itself';
