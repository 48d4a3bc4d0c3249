import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Snapshot, SourceObject } from '../../src/sources/snapshot.js';
import { certificateCoversHost, parseKeyPair, validityAt } from '../../src/translate/secrets/certificates.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { translate } from '../../src/translate/translate.js';
import { upstreamName } from '../../src/translate/upstream-names.js';
import { createCa, issueCertificate, type CertificateFiles } from '../support/pki.js';
import { daysFromTestNow, testNow, testTranslateOptions } from '../support/options.js';

const options: TranslateOptions = testTranslateOptions();

let caPem = '';
let pki: { leaf: CertificateFiles; expired: CertificateFiles; other: CertificateFiles };

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ingress2nginx-unit-'));
  const ca = await createCa(dir, 'unit CA');
  caPem = ca.certPem;
  const [leaf, expired, other] = await Promise.all([
    issueCertificate(ca, { commonName: 'app.example.test', sans: ['app.example.test'] }),
    issueCertificate(ca, { commonName: 'old', sans: ['old.example.test'], notBefore: daysFromTestNow(-30), days: 1 }),
    issueCertificate(ca, { commonName: 'other', sans: ['other.example.test'] }),
  ]);
  pki = { leaf, expired, other };
});

function object(kind: string, namespace: string, name: string, raw: Record<string, unknown>, annotations = {}): SourceObject {
  const apiVersion = kind === 'Ingress' ? 'networking.k8s.io/v1' : 'v1';
  return {
    apiVersion,
    kind,
    metadata: { name, namespace, annotations, labels: {}, creationTimestamp: '' },
    raw: { apiVersion, kind, metadata: { name, namespace }, ...raw },
  };
}

function ingress(name: string, service: Record<string, unknown>, annotations: Record<string, string> = {}): SourceObject {
  return object(
    'Ingress',
    'web',
    name,
    {
      spec: {
        ingressClassName: 'nginx',
        rules: [{ host: `${name}.example.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service } }] } }],
      },
    },
    annotations,
  );
}

function run(...objects: SourceObject[]) {
  return runWith({}, ...objects);
}

function runWith(extra: Partial<TranslateOptions>, ...objects: SourceObject[]) {
  const snapshot: Snapshot = { objects };
  return translate(snapshot, { ...options, ...extra });
}

describe('service backends', () => {
  it('answers 503 for a Service missing from the input, with an error: its name would have to resolve when nginx loads', () => {
    const { model, diagnostics } = run(ingress('app', { name: 'api', port: { number: 8080 } }));
    expect(model.http.upstreams).toEqual([]);
    expect(model.http.virtualHosts[0]!.locations[0]).toMatchObject({ returnStatus: 503 });
    expect(diagnostics).toEqual([
      expect.objectContaining({ severity: 'error', code: 'backend-unresolved', message: expect.stringContaining('--resolver') }),
    ]);
  });

  it('with --resolver, has nginx look a missing Service up per request, with a warning and no upstream block', () => {
    const { model, diagnostics } = runWith({ resolvers: ['10.96.0.10'] }, ingress('app', { name: 'api', port: { number: 8080 } }));
    expect(model.http.upstreams).toEqual([]);
    expect(model.http.resolvers).toEqual(['10.96.0.10']);
    expect(model.http.virtualHosts[0]!.locations[0]!.proxy).toMatchObject({
      resolve: 'api.web.svc.cluster.local:8080',
      pass: 'http://$i2n_backend',
    });
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'service-dns-name' })]);
  });

  it('cannot resolve a named port without the Service: error, and the path answers 503', () => {
    const { model, diagnostics } = run(ingress('app', { name: 'api', port: { name: 'http' } }));
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'error', code: 'backend-unresolved' })]);
    const location = model.http.virtualHosts[0]!.locations[0]!;
    expect(location.proxy).toBeUndefined();
    expect(model.http.upstreams).toEqual([]);
  });

  const namedServices = [
    object('Service', 'web', 'v6', { spec: { clusterIP: 'fd00::10', ports: [{ name: 'http', port: 8080 }] } }),
    object('Service', 'web', 'headless', { spec: { clusterIP: 'None', ports: [{ port: 9000 }] } }),
    object('Service', 'web', 'external', { spec: { type: 'ExternalName', externalName: 'db.example.org', ports: [{ port: 5432 }] } }),
    ingress('a', { name: 'v6', port: { name: 'http' } }),
    ingress('b', { name: 'headless', port: { number: 9000 } }),
    ingress('c', { name: 'external', port: { number: 5432 } }),
  ];

  it('resolves named ports through the Service and brackets IPv6 cluster IPs; names need --resolver', () => {
    const { model, diagnostics } = run(...namedServices);
    expect(model.http.upstreams.map((u) => [u.name, u.servers[0]!.address])).toEqual([[upstreamName('web_v6_8080'), '[fd00::10]:8080']]);
    expect(diagnostics.map((d) => [d.resource?.name, d.code])).toEqual([
      ['b', 'backend-unresolved'],
      ['c', 'backend-unresolved'],
    ]);
  });

  it('with --resolver, reaches headless and ExternalName Services by name, per request', () => {
    const { model, diagnostics } = runWith({ resolvers: ['10.96.0.10'] }, ...namedServices);
    const resolve = (host: string) =>
      model.http.virtualHosts.find((h) => h.serverName === host)!.locations.find((l) => l.proxy)!.proxy!.resolve;
    expect(resolve('b.example.test')).toBe('headless.web.svc.cluster.local:9000');
    expect(resolve('c.example.test')).toBe('db.example.org:5432');
    expect(model.http.upstreams.map((u) => u.name)).toEqual([upstreamName('web_v6_8080')]);
    expect(diagnostics.map((d) => d.code)).toEqual(['service-dns-name']);
  });

  const externalName = (name: string) =>
    object('Service', 'web', 'external', { spec: { type: 'ExternalName', externalName: name, ports: [{ port: 80 }] } });

  it.each([
    ['127.0.0.1', 'IP address'],
    ['0.0.0.0', 'IP address'],
    ['169.254.169.254', 'IP address'],
    ['2130706433', 'IP address'],
    ['0x7f.1', 'IP address'],
    ['10.0.0.1.', 'IP address'],
    ['localhost', 'the node itself (loopback)'],
    ['LOCALHOST', 'the node itself (loopback)'],
    ['app.localhost', 'the node itself (loopback)'],
    ['metadata.google.internal', 'a cloud metadata service'],
    ['instance-data.ec2.internal', 'a cloud metadata service'],
    ['metadata.tencentyun.com', 'a cloud metadata service'],
    ['127.0.0.1.nip.io', 'spells 127.0.0.1'],
    ['169-254-169-254.sslip.io', 'spells 169.254.169.254'],
  ])('refuses the ExternalName %s even with --resolver (%s)', (name, reason) => {
    const { model, diagnostics } = runWith({ resolvers: ['10.96.0.10'] }, externalName(name), ingress('app', { name: 'external', port: { number: 80 } }));
    expect(diagnostics).toEqual([
      expect.objectContaining({ severity: 'error', code: 'backend-unresolved', message: expect.stringContaining(reason) }),
    ]);
    expect(model.http.virtualHosts[0]!.locations[0]).toMatchObject({ returnStatus: 503 });
  });

  it('switches ExternalName backends off with --disable-svc-external-name', () => {
    const { diagnostics } = runWith(
      { resolvers: ['10.96.0.10'], disableExternalName: true },
      externalName('api.example.org'),
      ingress('app', { name: 'external', port: { number: 80 } }),
    );
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'backend-unresolved', message: expect.stringContaining('--disable-svc-external-name') })]);
  });

  it('keeps ExternalName backends inside --external-name-suffix domains', () => {
    const allowed = { resolvers: ['10.96.0.10'], externalNameSuffixes: ['example.org'] };
    const inside = runWith(allowed, externalName('api.example.org'), ingress('app', { name: 'external', port: { number: 80 } }));
    expect(inside.diagnostics).toEqual([]);
    const outside = runWith(allowed, externalName('api.example.org.evil.test'), ingress('app', { name: 'external', port: { number: 80 } }));
    expect(outside.diagnostics).toEqual([expect.objectContaining({ code: 'backend-unresolved', message: expect.stringContaining('outside the allowed domains') })]);
    const lookalike = runWith(allowed, externalName('notexample.org'), ingress('app', { name: 'external', port: { number: 80 } }));
    expect(lookalike.diagnostics).toEqual([expect.objectContaining({ code: 'backend-unresolved' })]);
  });

  it('refuses a cluster IP that nginx would not take (an IPv6 zone ID)', () => {
    const { model, diagnostics } = run(
      object('Service', 'web', 'api', { spec: { clusterIP: 'fe80::1%eth0', ports: [{ port: 80 }] } }),
      ingress('app', { name: 'api', port: { number: 80 } }),
    );
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'backend-unresolved', message: expect.stringContaining('invalid spec.clusterIP') })]);
    expect(model.http.upstreams).toEqual([]);
  });

  it('reports a Service port that does not exist', () => {
    const { diagnostics } = run(
      object('Service', 'web', 'api', { spec: { clusterIP: '10.0.0.1', ports: [{ port: 80 }] } }),
      ingress('app', { name: 'api', port: { number: 81 } }),
    );
    expect(diagnostics).toEqual([
      expect.objectContaining({ code: 'backend-unresolved', message: expect.stringContaining('has no port 81') }),
    ]);
  });
});

describe('--upstreams endpoints', () => {
  const slice = (name: string, service: string, body: Record<string, unknown>): SourceObject => {
    const base = object('EndpointSlice', 'web', name, body);
    return { ...base, apiVersion: 'discovery.k8s.io/v1', metadata: { ...base.metadata, labels: { 'kubernetes.io/service-name': service } } };
  };
  const api = object('Service', 'web', 'api', { spec: { clusterIP: '10.0.0.1', ports: [{ name: 'http', port: 80 }, { name: 'admin', port: 9000 }] } });

  it('balances over the ready addresses of the named port, across slices, leaving out addresses no tenant may use', () => {
    const { model, diagnostics } = runWith(
      { upstreams: 'endpoints' },
      api,
      slice('api-a', 'api', {
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080 }, { name: 'admin', port: 9090 }],
        endpoints: [
          { addresses: ['10.1.0.2'], conditions: { ready: true } },
          { addresses: ['10.1.0.3'] },
          { addresses: ['10.1.0.4'], conditions: { ready: false } },
          { addresses: ['127.0.0.1', '169.254.169.254', '0.0.0.0', '100.100.100.200'], conditions: { ready: true } },
        ],
      }),
      slice('api-b', 'api', {
        addressType: 'IPv6',
        ports: [{ name: 'http', port: 8080 }],
        endpoints: [{ addresses: ['fd00::5', '::1', 'fe80::1', 'fd00:ec2::254', '::ffff:169.254.169.254', '64:ff9b::7f00:1', '::127.0.0.1'] }],
      }),
      slice('other', 'other', { addressType: 'IPv4', ports: [{ name: 'http', port: 8080 }], endpoints: [{ addresses: ['10.9.9.9'] }] }),
      ingress('app', { name: 'api', port: { name: 'http' } }),
    );
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'endpoint-address-refused' })]);
    for (const address of ['127.0.0.1', '169.254.169.254', '0.0.0.0', '100.100.100.200', '::1', 'fe80::1', 'fd00:ec2::254', '::ffff:169.254.169.254', '64:ff9b::7f00:1', '::127.0.0.1']) {
      expect(diagnostics[0]?.message).toContain(`${address} (`);
    }
    expect(model.http.upstreams.map((u) => u.servers.map((s) => s.address))).toEqual([['10.1.0.2:8080', '10.1.0.3:8080', '[fd00::5]:8080']]);
  });

  it('answers 503 with an error when no endpoint is ready', () => {
    const { model, diagnostics } = runWith(
      { upstreams: 'endpoints' },
      api,
      slice('api-a', 'api', { addressType: 'IPv4', ports: [{ name: 'http', port: 8080 }], endpoints: [{ addresses: ['10.1.0.4'], conditions: { ready: false } }] }),
      ingress('app', { name: 'api', port: { number: 80 } }),
    );
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'backend-unresolved', message: expect.stringContaining('no ready endpoints') })]);
    expect(model.http.virtualHosts[0]!.locations[0]).toMatchObject({ returnStatus: 503 });
  });
});

describe('input order', () => {
  it('leaves out every copy of a duplicated object, whichever is read first', () => {
    const a = object('Service', 'web', 'api', { spec: { clusterIP: '10.0.0.1', ports: [{ port: 80 }] } });
    const b = object('Service', 'web', 'api', { spec: { clusterIP: '10.0.0.2', ports: [{ port: 80 }] } });
    const app = ingress('app', { name: 'api', port: { number: 80 } });
    const forward = run(a, b, app);
    const backward = run(b, a, app);
    expect(forward.model).toEqual(backward.model);
    expect(forward.diagnostics.filter((d) => d.code === 'resource-duplicate')).toHaveLength(2);
    expect(forward.model.http.upstreams).toEqual([]);
    expect(forward.diagnostics.filter((d) => d.code === 'backend-unresolved')).toHaveLength(1);
  });

  it('ignores a creation timestamp without a zone, which would be read in local time', () => {
    const withTime = (o: SourceObject, creationTimestamp: string): SourceObject => ({
      ...o,
      metadata: { ...o.metadata, creationTimestamp },
      raw: { ...o.raw, spec: { ingressClassName: 'nginx', rules: [{ host: 'same.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'api', port: { number: 80 } } } }] } }] } },
    });
    const { diagnostics } = run(withTime(ingress('older', { name: 'api', port: { number: 80 } }), '2024-01-01T00:00:00'), withTime(ingress('newer', { name: 'api', port: { number: 80 } }), '2024-06-01T00:00:00Z'));
    // The zoned one counts as older; the unzoned one loses the path.
    expect(diagnostics.find((d) => d.code === 'path-conflict')?.resource?.name).toBe('older');
  });
});

describe('HTTPS backends', () => {
  it('names the verified host after the Service, not the upstream block, when proxy-ssl-name is absent', () => {
    const ca = object('Secret', 'web', 'trust', { type: 'Opaque', data: {} });
    const { model } = run(
      object('Service', 'web', 'api', { spec: { clusterIP: '10.0.0.1', ports: [{ port: 443 }] } }),
      { ...ca, raw: { ...ca.raw, stringData: { 'ca.crt': caPem } } },
      ingress('app', { name: 'api', port: { number: 443 } }, {
        'nginx.ingress.kubernetes.io/backend-protocol': 'HTTPS',
        'nginx.ingress.kubernetes.io/proxy-ssl-secret': 'web/trust',
        'nginx.ingress.kubernetes.io/proxy-ssl-verify': 'on',
      }),
    );
    const proxy = model.http.virtualHosts[0]!.locations[0]!.proxy!;
    expect(proxy.pass).toMatch(new RegExp(`^https://${upstreamName('web_api_443')}_tls_[0-9a-f]{10}$`));
    expect(proxy.ssl).toMatchObject({ verify: true, name: 'api.web.svc.cluster.local', serverName: true, trustedCertificate: 'ca/web_trust.crt' });
  });
});

describe('--certificates-per-handshake', () => {
  const tlsIngress = () => {
    const app = object('Ingress', 'web', 'app', {
      spec: {
        ingressClassName: 'nginx',
        tls: [{ hosts: ['app.example.test'], secretName: 'app-tls' }],
        rules: [{ host: 'app.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }],
      },
    });
    const secret = object('Secret', 'web', 'app-tls', {
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': Buffer.from(pki.leaf.certPem).toString('base64'), 'tls.key': Buffer.from(pki.leaf.keyPem).toString('base64') },
    });
    return [app, secret];
  };
  const workerRead = (files: readonly { path: string; readByWorkers?: boolean }[]) => files.filter((f) => f.readByWorkers).map((f) => f.path);

  it('hands the key files to the nginx workers, who read them per handshake', () => {
    const { model } = runWith({ certificatesPerHandshake: true }, ...tlsIngress());
    const map = model.http.certificateMap;
    expect(map?.entries).toHaveLength(1);
    expect(workerRead(model.files).sort()).toEqual([map!.defaultFile, map!.entries[0]!.file].sort());
  });

  it('keeps them from the workers otherwise: the master loads them', () => {
    const { model } = runWith({}, ...tlsIngress());
    expect(model.http.certificateMap).toBeUndefined();
    expect(workerRead(model.files)).toEqual([]);
  });
});

describe('key pairs parsed by an earlier build', () => {
  const objects = () => {
    const secret = object('Secret', 'web', 'app-tls', {
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': Buffer.from(pki.leaf.certPem).toString('base64'), 'tls.key': Buffer.from(pki.leaf.keyPem).toString('base64') },
    });
    const app = object('Ingress', 'web', 'app', {
      spec: {
        ingressClassName: 'nginx',
        tls: [{ hosts: ['app.example.test'], secretName: 'app-tls' }],
        rules: [{ host: 'app.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }],
      },
    });
    return { secret, app };
  };

  it('give the same result when the cluster mode builds again from the same objects', () => {
    const { secret, app } = objects();
    const first = run(app, secret);
    expect(first.certificates).toEqual([expect.objectContaining({ host: 'app.example.test', subject: expect.stringContaining('app.example.test') })]);
    expect(run(app, secret)).toEqual(first);
  });

  it('are parsed again when the object was changed in place', () => {
    const { secret, app } = objects();
    expect(run(app, secret).certificates).toEqual([expect.objectContaining({ subject: expect.stringContaining('app.example.test') })]);
    (secret.raw as { data: Record<string, string> }).data = {
      'tls.crt': Buffer.from(pki.other.certPem).toString('base64'),
      'tls.key': Buffer.from(pki.other.keyPem).toString('base64'),
    };
    const again = run(app, secret);
    expect(again.certificates.map((c) => c.subject)).not.toContainEqual(expect.stringContaining('app.example.test'));
    expect(again.diagnostics).toContainEqual(expect.objectContaining({ severity: 'error', message: expect.stringContaining('app.example.test') }));
  });
});

describe('certificate checks', () => {
  it('accepts a matching pair and rejects a key of another certificate', () => {
    expect(parseKeyPair(pki.leaf.certPem, pki.leaf.keyPem).ok).toBe(true);
    const mismatch = parseKeyPair(pki.leaf.certPem, pki.other.keyPem);
    expect(mismatch).toEqual({ ok: false, problem: 'tls.key does not match the certificate in tls.crt' });
  });

  it('matches a wildcard for exactly one label', () => {
    expect(certificateCoversHost(['*.wild.example.test'], 'a.wild.example.test')).toBe(true);
    expect(certificateCoversHost(['*.wild.example.test'], 'a.b.wild.example.test')).toBe(false);
    expect(certificateCoversHost(['*.wild.example.test'], 'wild.example.test')).toBe(false);
    expect(certificateCoversHost(['*.wild.example.test'], '*.wild.example.test')).toBe(true);
    expect(certificateCoversHost(['app.example.test'], '*.example.test')).toBe(false);
  });

  it('reads SAN names from a real certificate and judges validity at the injected time', () => {
    const pair = parseKeyPair(pki.expired.certPem, pki.expired.keyPem);
    if (!pair.ok) throw new Error(pair.problem);
    expect(pair.value.dnsNames).toEqual(['old.example.test']);
    expect(validityAt(pair.value.validity, testNow)).toBe('expired');
    expect(validityAt(pair.value.validity, daysFromTestNow(-29.5))).toBe('valid');
    expect(validityAt(pair.value.validity, daysFromTestNow(-40))).toBe('not-yet-valid');
  });
});
