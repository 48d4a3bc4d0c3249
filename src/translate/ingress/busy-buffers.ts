import { sizeInBytes } from '../checks/allowlist.js';

/**
 * `proxy_busy_buffers_size` against the buffers it is merged with. nginx refuses to load a config where
 * the busy size is below one buffer or above all buffers but one, and it checks that in every block,
 * with the busy size inherited from the http block: a ConfigMap value that fits the ConfigMap's buffers
 * can still break a location whose Ingress asks for fewer or smaller ones.
 */
export function busySizeFits(busy: string, buffers: { readonly size: string; readonly number: number }): boolean {
  const bytes = sizeInBytes(busy);
  const one = sizeInBytes(buffers.size);
  return bytes >= one && bytes <= (buffers.number - 1) * one;
}

/** The words for a busy size that does not fit, for the diagnostic. */
export function busySizeRange(buffers: { readonly size: string; readonly number: number }): string {
  return `from one buffer (${buffers.size}) to all buffers but one (${buffers.number - 1} × ${buffers.size})`;
}

/**
 * What a location that sets its own buffers (or busy size) renders for `proxy_busy_buffers_size`:
 * the annotation when it fits its buffers, else nothing when the inherited ConfigMap value fits them,
 * else one buffer (always within nginx's bounds, since there are at least three). `annotationUnfit`
 * says the annotation was set and could not be used.
 */
export function locationBusySize(
  buffers: { readonly size: string; readonly number: number },
  annotation: string | undefined,
  configMap: string | undefined,
): { busySize?: string; annotationUnfit: boolean } {
  if (annotation !== undefined && busySizeFits(annotation, buffers)) return { busySize: annotation, annotationUnfit: false };
  const annotationUnfit = annotation !== undefined;
  if (configMap !== undefined) return busySizeFits(configMap, buffers) ? { annotationUnfit } : { busySize: buffers.size, annotationUnfit };
  // nginx's default is two buffers; with three buffers that is the most it allows, so say one.
  return buffers.number < 4 ? { busySize: buffers.size, annotationUnfit } : { annotationUnfit };
}
