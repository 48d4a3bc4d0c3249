/**
 * Locations ingress2nginx adds to a server of its own accord (the auth-url subrequest target) live under
 * one prefix that no Ingress path may use: a tenant's path there would collide with them (`nginx -t`
 * refuses a duplicate location), and the search for the culprit would then have to pick between the
 * tenant and the Ingress whose auth location it copied.
 */
export const internalLocationPrefix = '/.ingress2nginx/';

/** Whether an Ingress path (Exact, Prefix or ImplementationSpecific) would render into the internal prefix. */
export function isInternalPath(path: string): boolean {
  return path.startsWith(internalLocationPrefix) || path.replace(/\/+$/, '') === internalLocationPrefix.slice(0, -1);
}
