import type { SourceObject } from '../src/sources/snapshot.js';

/**
 * Objects as large as a front end lets one be (checks/size-budget.ts), and the hostile HTTPRoute of issue
 * 37 (16 rules × 64 matches, each with headers, query parameters and a method: within the CRD's maxima),
 * for the budget's test and `npm run bench:object-size`. Plain source objects, all in one namespace.
 */

const created = '2025-01-01T00:00:00Z';

function sourceObject(apiVersion: string, kind: string, namespace: string, name: string, body: Record<string, unknown>, annotations: Record<string, string> = {}): SourceObject {
  return {
    apiVersion,
    kind,
    metadata: { name, namespace, annotations, labels: {}, creationTimestamp: created },
    raw: { apiVersion, kind, metadata: { name, namespace, annotations, creationTimestamp: created }, ...body },
  };
}

export function service(namespace: string, name: string, index = 1): SourceObject {
  return sourceObject('v1', 'Service', namespace, name, { spec: { clusterIP: `10.96.${Math.floor(index / 250) % 250}.${(index % 250) + 1}`, ports: [{ port: 80 }] } });
}

export function httpGateway(namespace = 'infra', port = 80): SourceObject {
  return sourceObject('gateway.networking.k8s.io/v1', 'Gateway', namespace, 'edge', {
    spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'http', port, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] },
  });
}

export interface RouteShape {
  readonly hosts: number;
  readonly rules: number;
  readonly matches: number;
  /** Headers and query parameters each (the method is one more condition). */
  readonly conditions: number;
}

/** The hostile route's shape: one host, the CRD's maxima of rules and matches, 16 headers and 16 query parameters each. */
export const hostileRouteShape: RouteShape = { hosts: 1, rules: 16, matches: 64, conditions: 16 };

/** An HTTPRoute of `shape` on `httpGateway()`, to Service `web` of its namespace. */
export function httpRoute(namespace: string, name: string, shape: RouteShape): SourceObject {
  const rules = Array.from({ length: shape.rules }, (_, r) => ({
    matches: Array.from({ length: shape.matches }, (_, m) => ({
      // Matches with conditions share their rule's path (nginx then tells them apart by maps); others do not.
      path: { type: 'PathPrefix', value: shape.conditions > 0 ? `/r${r}` : `/r${r}/m${m}` },
      ...(shape.conditions > 0 && {
        headers: Array.from({ length: shape.conditions }, (_, k) => ({ name: `X-H${k}`, value: `v${r}-${m}-${k}` })),
        queryParams: Array.from({ length: shape.conditions }, (_, k) => ({ name: `q${k}`, value: `v${m}` })),
        method: 'GET',
      }),
    })),
    backendRefs: [{ name: 'web', port: 80 }],
  }));
  return sourceObject('gateway.networking.k8s.io/v1', 'HTTPRoute', namespace, name, {
    spec: { parentRefs: [{ name: 'edge', namespace: 'infra' }], hostnames: Array.from({ length: shape.hosts }, (_, h) => `h${h}.${name}.${namespace}.example.test`), rules },
  });
}

/** An Ingress of `hosts` × `paths` locations (plus one per host), to Service `web` of its namespace. */
export function ingress(namespace: string, name: string, hosts: number, paths: number): SourceObject {
  const backend = { service: { name: 'web', port: { number: 80 } } };
  return sourceObject('networking.k8s.io/v1', 'Ingress', namespace, name, {
    spec: {
      ingressClassName: 'nginx',
      rules: Array.from({ length: hosts }, (_, h) => ({
        host: `h${h}.${name}.${namespace}.example.test`,
        http: { paths: Array.from({ length: paths }, (_, p) => ({ path: `/p${p}`, pathType: 'Prefix', backend })) },
      })),
    },
  });
}
