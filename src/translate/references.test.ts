import { describe, expect, it } from 'vitest';
import { object } from '../../test/support/gateway.js';
import { referencedObjects } from './references.js';

describe('referencedObjects', () => {
  it('names what the cluster mode must follow besides TLS Secrets, once each, sorted', () => {
    const ingress = (name: string, secret: string) => {
      const base = object('networking.k8s.io/v1', 'Ingress', 'apps', name, { spec: { tls: [{ secretName: 'app-tls' }] } });
      return { ...base, metadata: { ...base.metadata, annotations: { 'nginx.ingress.kubernetes.io/proxy-ssl-secret': secret } } };
    };
    const policy = object('gateway.networking.k8s.io/v1', 'BackendTLSPolicy', 'apps', 'p', {
      spec: { validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'backend-ca' }, { kind: 'Secret', name: 'ignored' }] } },
    });
    const refs = referencedObjects({ objects: [ingress('a', 'trust/ca'), ingress('b', 'trust/ca'), ingress('c', 'not a reference'), policy] }, { configMap: 'infra/controller', allowCrossNamespaceSecrets: true });
    expect(refs).toEqual([
      { kind: 'ConfigMap', namespace: 'apps', name: 'backend-ca' },
      { kind: 'ConfigMap', namespace: 'infra', name: 'controller' },
      { kind: 'Secret', namespace: 'trust', name: 'ca' },
    ]);
  });
});

describe('referencedObjects of the auth annotations', () => {
  it('follows auth-secret and auth-tls-secret, a bare name in the Ingress namespace', () => {
    const base = object('networking.k8s.io/v1', 'Ingress', 'apps', 'guarded', { spec: {} });
    const ingress = {
      ...base,
      metadata: {
        ...base.metadata,
        annotations: { 'nginx.ingress.kubernetes.io/auth-secret': 'users', 'nginx.ingress.kubernetes.io/auth-tls-secret': 'pki/client-ca' },
      },
    };
    expect(referencedObjects({ objects: [ingress] }, { allowCrossNamespaceSecrets: true })).toEqual([
      { kind: 'Secret', namespace: 'apps', name: 'users' },
      { kind: 'Secret', namespace: 'pki', name: 'client-ca' },
    ]);
  });

  it('follows a Secret in another namespace only with --allow-cross-namespace-secrets, as translate reads it only then', () => {
    const base = object('networking.k8s.io/v1', 'Ingress', 'tenant', 'nosy', { spec: {} });
    const annotations = {
      'nginx.ingress.kubernetes.io/auth-secret': 'kube-system/bootstrap-token-abcdef',
      'nginx.ingress.kubernetes.io/auth-tls-secret': 'kube-system/ca',
      'nginx.ingress.kubernetes.io/proxy-ssl-secret': 'kube-system/etcd',
      'nginx.ingress.kubernetes.io/auth-realm': 'x',
    };
    const ingress = { ...base, metadata: { ...base.metadata, annotations } };
    expect(referencedObjects({ objects: [ingress] }, { allowCrossNamespaceSecrets: false })).toEqual([]);
    expect(referencedObjects({ objects: [ingress] }, { allowCrossNamespaceSecrets: true }).map((r) => r.name)).toEqual(['bootstrap-token-abcdef', 'ca', 'etcd']);
  });
});

describe('referencedObjects of the TCP and UDP services', () => {
  it("follows the operator's TCP and UDP services ConfigMaps, as the controller ConfigMap", () => {
    const options = { configMap: 'infra/controller', tcpServicesConfigMap: 'infra/tcp', udpServicesConfigMap: 'edge/udp', allowCrossNamespaceSecrets: false };
    expect(referencedObjects({ objects: [] }, options)).toEqual([
      { kind: 'ConfigMap', namespace: 'edge', name: 'udp' },
      { kind: 'ConfigMap', namespace: 'infra', name: 'controller' },
      { kind: 'ConfigMap', namespace: 'infra', name: 'tcp' },
    ]);
  });
});
