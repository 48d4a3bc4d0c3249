import { compareStrings } from '../model/order.js';
import type { Snapshot } from '../sources/snapshot.js';
import { annotationPrefix } from './ingress/annotations/index.js';
import type { TranslateOptions } from './options.js';

/** A Secret or ConfigMap that some resource (or option) names, so the cluster mode watches it. */
export interface Reference {
  readonly kind: 'Secret' | 'ConfigMap';
  readonly namespace: string;
  readonly name: string;
}

type Loose = Record<string, unknown>;
const mapping = (value: unknown): Loose => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Loose) : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * The Secrets and ConfigMaps that the snapshot refers to besides TLS Secrets (which the cluster mode
 * watches by type, so `spec.tls`, listener certificates and the default certificate need nothing
 * more): `proxy-ssl-secret`, `auth-secret` (basic-auth users) and `auth-tls-secret` (client CA) of
 * Ingresses, which are often Opaque, CA ConfigMaps of
 * BackendTLSPolicies, and the controller's ConfigMaps (settings, TCP and UDP services). Read loosely: a malformed reference is translate's
 * to report, here it is simply not followed. A reference into another namespace is followed only with
 * `allowCrossNamespaceSecrets`, as translate reads it only then: a tenant cannot make the cluster mode
 * read Secrets of kube-system by naming them. Sorted and without duplicates.
 */
export function referencedObjects(snapshot: Snapshot, options: Pick<TranslateOptions, 'configMap' | 'tcpServicesConfigMap' | 'udpServicesConfigMap' | 'allowCrossNamespaceSecrets'>): Reference[] {
  const found = new Map<string, Reference>();
  const add = (kind: Reference['kind'], namespace: string | undefined, name: string | undefined) => {
    if (namespace === undefined || name === undefined) return;
    found.set(`${kind}/${namespace}/${name}`, { kind, namespace, name });
  };
  const split = (value: string | undefined) => value?.split('/') ?? [];
  for (const operatorConfigMap of [options.configMap, options.tcpServicesConfigMap, options.udpServicesConfigMap]) {
    const [configNamespace, configName] = split(operatorConfigMap);
    add('ConfigMap', configNamespace, configName);
  }

  for (const object of snapshot.objects) {
    const { namespace } = object.metadata;
    const spec = mapping(object.raw['spec']);
    switch (object.kind) {
      case 'Ingress': {
        const annotation = (name: string) => text(object.metadata.annotations[`${annotationPrefix}${name}`]);
        const addSecret = (secretNamespace: string | undefined, name: string | undefined) => {
          if (secretNamespace === namespace || options.allowCrossNamespaceSecrets) add('Secret', secretNamespace, name);
        };
        const proxySecret = split(annotation('proxy-ssl-secret'));
        addSecret(proxySecret[0], proxySecret[1]);
        // `name` alone is in the Ingress's namespace.
        for (const name of ['auth-secret', 'auth-tls-secret']) {
          const parts = split(annotation(name));
          if (parts.length === 1) addSecret(namespace, parts[0]);
          else addSecret(parts[0], parts[1]);
        }
        break;
      }
      case 'BackendTLSPolicy':
        for (const ref of list(mapping(spec['validation'])['caCertificateRefs'])) {
          const r = mapping(ref);
          if (text(r['kind']) === 'ConfigMap') add('ConfigMap', namespace, text(r['name']));
        }
        break;
    }
  }
  return [...found.values()].sort((a, b) => compareStrings(`${a.kind}/${a.namespace}/${a.name}`, `${b.kind}/${b.namespace}/${b.name}`));
}
