import type { SourceObject } from '../sources/snapshot.js';
import { quoteKey } from './checks/allowlist.js';
import { key } from './resources.js';

/**
 * Manifests as teams keep them in git (`helm template`, `kustomize build`) lack what the cluster
 * provides when they are applied: the API server assigns a Service's cluster IP, and controllers such
 * as cert-manager or external-secrets create the TLS Secrets. In file mode (`expectClusterProvided`)
 * these are rendered with stand-ins that keep `nginx -t` meaningful and the output byte-stable:
 *
 * - a Service without `spec.clusterIP` is reached at `clusterIpStandIn` on its port: an address of
 *   TEST-NET-1 (RFC 5737), which is never routed, so a config rendered from such manifests can never
 *   send traffic anywhere real; reports name the Service and say the address is assigned at apply;
 * - a TLS Secret that is not in the input is written under its own file name (`tls/<ns>_<name>.pem`,
 *   where the cluster mode writes it) holding the default certificate (what the cluster mode serves
 *   until the Secret exists), with a warning that says where the Secret is expected to come from.
 */
export const clusterIpStandIn = '192.0.2.1';

/** `kind` and the API group it must come from, and where in it the Secret's name is. */
interface SecretMaker {
  readonly kind: string;
  readonly group: string;
  readonly what: string;
  readonly secretName: (object: SourceObject) => string | undefined;
}

const makers: readonly SecretMaker[] = [
  { kind: 'Certificate', group: 'cert-manager.io', what: 'cert-manager', secretName: (o) => stringAt(o.raw, ['spec', 'secretName']) },
  {
    kind: 'ExternalSecret',
    group: 'external-secrets.io',
    what: 'external-secrets',
    // The target name defaults to the ExternalSecret's own.
    secretName: (o) => stringAt(o.raw, ['spec', 'target', 'name']) ?? o.metadata.name,
  },
  { kind: 'SealedSecret', group: 'bitnami.com', what: 'sealed-secrets', secretName: (o) => o.metadata.name },
];

/** Annotations that make cert-manager create the Secret of an Ingress's or Gateway's TLS section. */
const certManagerAnnotations = ['cert-manager.io/cluster-issuer', 'cert-manager.io/issuer'] as const;

/**
 * Says where Secrets that are not in the input are expected to come from: a resource in the input
 * that makes them (a cert-manager Certificate, an ExternalSecret, a SealedSecret), the cert-manager
 * annotation of the resource that names them, or else the cluster.
 */
export class SecretOrigins {
  private readonly made = new Map<string, string>();

  /** `quarantined`: object ids (`Secret/ns/name`) left out because nginx rejected them; those are missing, not expected. */
  constructor(
    objects: readonly SourceObject[],
    private readonly quarantined: ReadonlySet<string> = new Set(),
  ) {
    for (const object of objects) {
      const maker = makers.find((m) => m.kind === object.kind && object.apiVersion.startsWith(`${m.group}/`));
      const name = maker?.secretName(object);
      if (!maker || name === undefined) continue;
      const id = key(object.metadata.namespace, name);
      const description = `${maker.what} makes it (${object.kind} ${key(object.metadata.namespace, object.metadata.name)} in the input)`;
      // Sorted input is not guaranteed here: the first maker by name wins, whatever the order.
      const earlier = this.made.get(id);
      if (earlier === undefined || description < earlier) this.made.set(id, description);
    }
  }

  /** `cert-manager makes it (Certificate apps/web-tls in the input)`, `…(annotation cert-manager.io/cluster-issuer: …)`, or `expected in the cluster …`. */
  describe(namespace: string, name: string, referrer: SourceObject): string | undefined {
    if (this.quarantined.has(`Secret/${namespace}/${name}`)) return undefined;
    const made = this.made.get(key(namespace, name));
    if (made !== undefined) return made;
    for (const annotation of certManagerAnnotations) {
      const issuer = referrer.metadata.annotations[annotation];
      if (issuer !== undefined) {
        return `cert-manager makes it (annotation ${annotation}: ${quoteKey(issuer.length > 63 ? `${issuer.slice(0, 63)}…` : issuer)} on ${referrer.kind} ${key(referrer.metadata.namespace, referrer.metadata.name)})`;
      }
    }
    return 'expected in the cluster (nothing in the input makes it)';
  }
}

function stringAt(value: unknown, path: readonly string[]): string | undefined {
  let current = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return typeof current === 'string' && current !== '' ? current : undefined;
}
