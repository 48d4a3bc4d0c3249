import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SourceObject } from '../../src/sources/snapshot.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { translate } from '../../src/translate/translate.js';
import { backendTlsPolicy, gateway, object, service, terminate, tlsRoute, tlsSecret } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';
import { createCa, issueCertificate, type CertificateFiles } from '../support/pki.js';

/** The Secrets and ConfigMaps a build read, which the cluster mode follows: the build's own, exact set. */

let serverCert: CertificateFiles;
beforeAll(async () => {
  const ca = await createCa(await mkdtemp(join(tmpdir(), 'i2n-references-')), 'references CA');
  serverCert = await issueCertificate(ca, { commonName: 'secure.example.com', sans: ['secure.example.com'] });
});

function ingress(namespace: string, name: string, annotations: Record<string, string>): SourceObject {
  const base = object('networking.k8s.io/v1', 'Ingress', namespace, name, {
    spec: {
      ingressClassName: 'nginx',
      tls: [{ hosts: [`${name}.example.test`], secretName: 'app-tls' }],
      rules: [{ host: `${name}.example.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 443 } } } }] } }],
    },
  });
  return { ...base, metadata: { ...base.metadata, annotations } };
}

const references = (objects: readonly SourceObject[], extra: Partial<TranslateOptions>) =>
  translate({ objects }, { ...testTranslateOptions(), ...extra }).references;

describe('the references of a build', () => {
  it('names what the cluster mode must follow besides TLS Secrets, once each, sorted', () => {
    const https = (secret: string) => ({ 'nginx.ingress.kubernetes.io/backend-protocol': 'HTTPS', 'nginx.ingress.kubernetes.io/proxy-ssl-secret': secret });
    const objects = [
      service('apps', 'web', '10.0.0.3', [{ port: 443 }]),
      ingress('apps', 'a', https('trust/ca')),
      ingress('apps', 'b', https('trust/ca')),
      ingress('apps', 'c', https('not a reference')),
      gateway('infra', 'gw', [terminate('tls', 443, 'secure.example.com', [{ name: 'cert' }], { allowedRoutes: { namespaces: { from: 'All' } } })]),
      tlsSecret('infra', 'cert', serverCert),
      tlsRoute('apps', 'app', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'tls' }], hostnames: ['secure.example.com'], backendRefs: [{ name: 'app', port: 8443 }] }),
      service('apps', 'app', '10.0.0.1', [{ port: 8443, name: 'https' }]),
      backendTlsPolicy('apps', 'p', {
        targetRefs: [{ group: '', kind: 'Service', name: 'app' }],
        validation: { hostname: 'app.internal', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'backend-ca' }] },
      }),
    ];
    expect(references(objects, { configMap: 'infra/controller', allowCrossNamespaceSecrets: true })).toEqual([
      { kind: 'ConfigMap', namespace: 'apps', name: 'backend-ca' },
      { kind: 'ConfigMap', namespace: 'infra', name: 'controller' },
      { kind: 'Secret', namespace: 'trust', name: 'ca' },
    ]);
  });
});

describe('the references of the auth annotations', () => {
  it('follows auth-secret and auth-tls-secret, a bare name in the Ingress namespace', () => {
    const guarded = ingress('apps', 'guarded', {
      'nginx.ingress.kubernetes.io/auth-type': 'basic',
      'nginx.ingress.kubernetes.io/auth-secret': 'users',
      'nginx.ingress.kubernetes.io/auth-tls-secret': 'pki/client-ca',
    });
    expect(references([service('apps', 'web', '10.0.0.3', [{ port: 443 }]), guarded], { allowCrossNamespaceSecrets: true })).toEqual([
      { kind: 'Secret', namespace: 'apps', name: 'users' },
      { kind: 'Secret', namespace: 'pki', name: 'client-ca' },
    ]);
  });

  it('follows a Secret in another namespace only with --allow-cross-namespace-secrets, as translate reads it only then', () => {
    const auth = {
      'nginx.ingress.kubernetes.io/auth-type': 'basic',
      'nginx.ingress.kubernetes.io/auth-secret': 'kube-system/bootstrap-token-abcdef',
      'nginx.ingress.kubernetes.io/auth-tls-secret': 'kube-system/ca',
      'nginx.ingress.kubernetes.io/auth-realm': 'x',
    };
    // A second Ingress: the first is left out (its Secrets are missing) before its backend is set up.
    const backend = { 'nginx.ingress.kubernetes.io/backend-protocol': 'HTTPS', 'nginx.ingress.kubernetes.io/proxy-ssl-secret': 'kube-system/etcd' };
    const objects = [service('tenant', 'web', '10.0.0.3', [{ port: 443 }]), ingress('tenant', 'nosy', auth), ingress('tenant', 'nosier', backend)];
    expect(references(objects, { allowCrossNamespaceSecrets: false })).toEqual([]);
    expect(references(objects, { allowCrossNamespaceSecrets: true }).map((r) => r.name)).toEqual(['bootstrap-token-abcdef', 'ca', 'etcd']);
  });
});

describe('the references of the TCP and UDP services', () => {
  it("follows the operator's TCP and UDP services ConfigMaps, as the controller ConfigMap", () => {
    const options = { configMap: 'infra/controller', tcpServicesConfigMap: 'infra/tcp', udpServicesConfigMap: 'edge/udp' };
    expect(references([], options)).toEqual([
      { kind: 'ConfigMap', namespace: 'edge', name: 'udp' },
      { kind: 'ConfigMap', namespace: 'infra', name: 'controller' },
      { kind: 'ConfigMap', namespace: 'infra', name: 'tcp' },
    ]);
  });
});
