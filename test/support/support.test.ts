import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  createNginxPrefix,
  nginxTest,
  prefixDirectives,
  requireNginx,
  startNginx,
  stopAllNginx,
  type RunningNginx,
} from './nginx.js';
import {
  httpGet,
  httpsGet,
  parseEcho,
  startHttpBackend,
  startHttpsBackend,
  startTcpEcho,
  startTlsBackend,
  tlsProbe,
  type Peer,
} from './peers.js';
import {
  caSecretManifest,
  createCa,
  issueCertificate,
  selfSigned,
  tlsSecretManifest,
  type CertificateAuthority,
  type CertificateFiles,
} from './pki.js';
import { freePort, freePorts } from './ports.js';
import { daysFromTestNow, testNow } from './options.js';

const temporaryDirs: string[] = [];
const peers: Peer[] = [];

async function temporaryDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ingress2nginx-support-'));
  temporaryDirs.push(dir);
  return dir;
}

async function startPeer(started: Promise<Peer>): Promise<Peer> {
  const peer = await started;
  peers.push(peer);
  return peer;
}

async function writeConf(prefix: string, text: string): Promise<string> {
  const conf = path.join(prefix, 'nginx.conf');
  await writeFile(conf, text);
  return conf;
}

/** A stream server that routes TLS by SNI (`hostnames;` map) to the given targets. */
function sniRoutingStream(listenPort: number, routes: Record<string, number>, defaultPort: number): string {
  const entries = Object.entries(routes).map(([name, port]) => `    ${name} 127.0.0.1:${port};`);
  return `
stream {
  map $ssl_preread_server_name $tls_route {
    hostnames;
${entries.join('\n')}
    default 127.0.0.1:${defaultPort};
  }
  server {
    listen 127.0.0.1:${listenPort};
    ssl_preread on;
    proxy_pass $tls_route;
  }
}
`;
}

afterAll(async () => {
  await stopAllNginx();
  await Promise.all(peers.map((peer) => peer.close()));
  await Promise.all(temporaryDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('pki', () => {
  let ca: CertificateAuthority;
  let dir: string;

  beforeAll(async () => {
    dir = await temporaryDir();
    ca = await createCa(dir, 'Support Test CA');
  });

  it('issues a CA-signed server certificate carrying exact and wildcard SANs', async () => {
    const issued = await issueCertificate(ca, { commonName: 'a.example.com', sans: ['a.example.com', '*.b.example.com'] });
    const certificate = new X509Certificate(issued.certPem);
    const authority = new X509Certificate(ca.certPem);

    expect(certificate.subject).toBe('CN=a.example.com');
    expect(certificate.subjectAltName).toBe('DNS:a.example.com, DNS:*.b.example.com');
    expect(certificate.checkHost('x.b.example.com')).toBe('*.b.example.com');
    expect(certificate.checkIssued(authority)).toBe(true);
    expect(certificate.verify(authority.publicKey)).toBe(true);
    expect(certificate.checkPrivateKey(createPrivateKey(issued.keyPem))).toBe(true);
    expect(authority.ca).toBe(true);
  });

  it('issues a certificate whose validity already ended', async () => {
    const notBefore = daysFromTestNow(-30);
    const issued = await issueCertificate(ca, { commonName: 'expired.example.com', sans: ['expired.example.com'], notBefore, days: 1 });
    const certificate = new X509Certificate(issued.certPem);

    expect(new Date(certificate.validTo).getTime()).toBeLessThan(testNow.getTime());
    expect(new Date(certificate.validFrom).getTime()).toBeLessThan(new Date(certificate.validTo).getTime());
  });

  it('makes a self-signed RSA certificate', async () => {
    const issued = await selfSigned(dir, { commonName: 'self.example.com', sans: ['self.example.com'], keyType: 'rsa-2048' });
    const certificate = new X509Certificate(issued.certPem);

    expect(certificate.issuer).toBe('CN=self.example.com');
    expect(certificate.publicKey.asymmetricKeyType).toBe('rsa');
    expect(certificate.verify(certificate.publicKey)).toBe(true);
  });

  it('issues a client certificate that a backend requiring mTLS accepts', async () => {
    const serverCertificate = await issueCertificate(ca, { commonName: 'backend.internal', sans: ['backend.internal'] });
    const clientCertificate = await issueCertificate(ca, { commonName: 'client.example.com', serverAuth: false, clientAuth: true });
    const backend = await startPeer(
      startHttpsBackend({ name: 'mtls', cert: serverCertificate.certPem, key: serverCertificate.keyPem, ca: ca.certPem, requestClientCert: true }),
    );

    const response = await httpsGet({ port: backend.port, servername: 'backend.internal', ca: ca.certPem, clientCertificate });
    expect(response.status).toBe(200);
    expect(parseEcho(response.body)).toMatchObject({ backend: 'mtls', servername: 'backend.internal', clientCertSubject: 'client.example.com' });
    expect(response.peerCertificate?.subjectCN).toBe('backend.internal');

    await expect(httpsGet({ port: backend.port, servername: 'backend.internal', ca: ca.certPem })).rejects.toThrow();
  });

  it('builds Secret manifests with base64 PEM data', async () => {
    const issued = await issueCertificate(ca, { commonName: 'secret.example.com', sans: ['secret.example.com'] });
    const decode = (value: string): string => Buffer.from(value, 'base64').toString('utf8');

    const tlsSecret = parse(tlsSecretManifest({ name: 'web-tls', namespace: 'shop', certificate: issued, caPem: ca.certPem }));
    expect(tlsSecret).toMatchObject({ apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'web-tls', namespace: 'shop' } });
    expect(decode(tlsSecret.data['tls.crt'])).toBe(issued.certPem);
    expect(decode(tlsSecret.data['tls.key'])).toBe(issued.keyPem);
    expect(decode(tlsSecret.data['ca.crt'])).toBe(ca.certPem);

    const caSecret = parse(caSecretManifest({ name: 'backend-ca', caPem: ca.certPem }));
    expect(caSecret).toMatchObject({ type: 'Opaque', metadata: { name: 'backend-ca', namespace: 'default' } });
    expect(Object.keys(caSecret.data)).toEqual(['ca.crt']);
    expect(decode(caSecret.data['ca.crt'])).toBe(ca.certPem);
  });
});

describe('ports', () => {
  it('hands out distinct ports that can be bound', async () => {
    const ports = await freePorts(5);
    expect(new Set(ports).size).toBe(5);
    const servers = await Promise.all(
      ports.map(
        (port) =>
          new Promise<net.Server>((resolve, reject) => {
            const server = net.createServer();
            server.once('error', reject);
            server.listen(port, '127.0.0.1', () => resolve(server));
          }),
      ),
    );
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });
});

describe('peers', () => {
  it('echoes over plain TCP', async () => {
    const echo = await startPeer(startTcpEcho());
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port: echo.port }, () => socket.end('ping\n'));
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (received += chunk));
      socket.once('end', () => resolve(received));
      socket.once('error', reject);
    });
    expect(reply).toBe('ping\n');
  });
});

describe('nginx harness against real nginx', () => {
  let ca: CertificateAuthority;
  let prefix: string;
  let nginx: RunningNginx;
  let streamPort: number;
  let httpPort: number;
  let httpsPort: number;
  let unreachablePort: number;

  beforeAll(async () => {
    requireNginx();
    const dir = await temporaryDir();
    prefix = await createNginxPrefix();
    temporaryDirs.push(prefix);
    ca = await createCa(dir, 'Harness CA');
    const [aCertificate, defaultCertificate, secureCertificate, backendCertificate, nginxClientCertificate] = await Promise.all([
      issueCertificate(ca, { commonName: 'a.example.com', sans: ['a.example.com', '*.wild.example.com'] }),
      issueCertificate(ca, { commonName: 'default.example.com', sans: ['default.example.com'] }),
      issueCertificate(ca, { commonName: 'secure.example.com', sans: ['secure.example.com'] }),
      issueCertificate(ca, { commonName: 'backend.internal', sans: ['backend.internal'] }),
      issueCertificate(ca, { commonName: 'nginx-client', serverAuth: false, clientAuth: true }),
    ]);
    const [backendA, backendDefault, httpBackend, httpsBackend] = await Promise.all([
      startPeer(startTlsBackend({ name: 'backend-a', cert: aCertificate.certPem, key: aCertificate.keyPem })),
      startPeer(startTlsBackend({ name: 'backend-default', cert: defaultCertificate.certPem, key: defaultCertificate.keyPem })),
      startPeer(startHttpBackend('http-echo')),
      startPeer(
        startHttpsBackend({ name: 'https-echo', cert: backendCertificate.certPem, key: backendCertificate.keyPem, ca: ca.certPem, requestClientCert: true }),
      ),
    ]);
    [streamPort, httpPort, httpsPort, unreachablePort] = (await freePorts(4)) as [number, number, number, number];

    const { main, http } = prefixDirectives(prefix);
    const conf = await writeConf(
      prefix,
      `${main}
${sniRoutingStream(streamPort, { 'a.example.com': backendA.port, '*.wild.example.com': backendA.port, 'unreachable.example.com': unreachablePort }, backendDefault.port)}
http {
${http}
  server {
    listen 127.0.0.1:${httpPort};
    location / {
      proxy_pass http://127.0.0.1:${httpBackend.port};
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Port $server_port;
    }
  }
  server {
    listen 127.0.0.1:${httpsPort} ssl default_server;
    ssl_reject_handshake on;
  }
  server {
    listen 127.0.0.1:${httpsPort} ssl;
    server_name secure.example.com;
    ssl_certificate ${secureCertificate.certFile};
    ssl_certificate_key ${secureCertificate.keyFile};
    location / {
      proxy_pass https://127.0.0.1:${httpsBackend.port};
      proxy_ssl_verify on;
      proxy_ssl_trusted_certificate ${ca.certFile};
      proxy_ssl_name backend.internal;
      proxy_ssl_server_name on;
      proxy_ssl_certificate ${nginxClientCertificate.certFile};
      proxy_ssl_certificate_key ${nginxClientCertificate.keyFile};
    }
  }
}
`,
    );
    const check = await nginxTest(conf, prefix);
    expect(check.output).toContain('test is successful');
    expect(check.ok).toBe(true);
    nginx = await startNginx({ prefix, conf, ports: [streamPort, httpPort, httpsPort] });
  });

  it('routes an exact SNI to its passthrough backend', async () => {
    const probe = await tlsProbe({ port: streamPort, servername: 'a.example.com', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from backend-a sni=a.example.com\n' });
    expect(probe.peerCertificate?.subjectCN).toBe('a.example.com');
    expect(probe.peerCertificate?.subjectAltNames).toEqual(['DNS:a.example.com', 'DNS:*.wild.example.com']);
  });

  it('routes a name under a wildcard key (map `hostnames;`) to its backend', async () => {
    const probe = await tlsProbe({ port: streamPort, servername: 'x.wild.example.com', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from backend-a sni=x.wild.example.com\n' });
  });

  it('routes unknown and missing SNI to the default backend', async () => {
    const unknown = await tlsProbe({ port: streamPort, servername: 'other.example.com' });
    expect(unknown).toMatchObject({ outcome: 'connected', data: 'hello from backend-default sni=other.example.com\n' });
    expect(unknown.peerCertificate?.subjectCN).toBe('default.example.com');

    const withoutSni = await tlsProbe({ port: streamPort });
    expect(withoutSni).toMatchObject({ outcome: 'connected', data: 'hello from backend-default sni=\n' });
  });

  it('reports a connection nginx closes without a TLS alert as closed', async () => {
    const probe = await tlsProbe({ port: streamPort, servername: 'unreachable.example.com' });
    expect(probe.outcome).toBe('closed');
    expect(await nginx.waitForStderr(/connect\(\) failed .* while connecting to upstream/)).toContain(`upstream: "127.0.0.1:${unreachablePort}"`);
  });

  it('reports a handshake nginx refuses with an alert as a TLS error', async () => {
    const probe = await tlsProbe({ port: httpsPort, servername: 'nobody.example.com' });
    expect(probe.outcome).toBe('tls-error');
    expect(probe.errorCode).toMatch(/^ERR_SSL_/);
  });

  it('proxies plain HTTP to a backend that echoes the forwarded headers', async () => {
    const response = await httpGet({ port: httpPort, host: 'app.example.com', path: '/some/path?q=1' });
    expect(response.status).toBe(200);
    const echo = parseEcho(response.body);
    expect(echo).toMatchObject({ backend: 'http-echo', path: '/some/path?q=1', servername: null });
    expect(echo.headers).toMatchObject({
      host: 'app.example.com',
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-port': String(httpPort),
    });
  });

  it('terminates TLS and re-encrypts to a verifying mTLS backend', async () => {
    const response = await httpsGet({ port: httpsPort, servername: 'secure.example.com', path: '/x', ca: ca.certPem });
    expect(response.status).toBe(200);
    expect(response.peerCertificate?.subjectCN).toBe('secure.example.com');
    expect(parseEcho(response.body)).toMatchObject({
      backend: 'https-echo',
      path: '/x',
      servername: 'backend.internal',
      clientCertSubject: 'nginx-client',
    });
  });

  it('nginxTest reports a broken configuration', async () => {
    const brokenPrefix = await createNginxPrefix();
    temporaryDirs.push(brokenPrefix);
    const conf = await writeConf(brokenPrefix, `${prefixDirectives(brokenPrefix).main}\nhttp { server { listen 127.0.0.1:${await freePort()}; bogus_directive on; } }\n`);
    const check = await nginxTest(conf, brokenPrefix);
    expect(check.ok).toBe(false);
    expect(check.output).toContain('unknown directive "bogus_directive"');
  });

  it('startNginx refuses a configuration that sets daemon', async () => {
    const daemonPrefix = await createNginxPrefix();
    temporaryDirs.push(daemonPrefix);
    const conf = await writeConf(daemonPrefix, `daemon on;\n${prefixDirectives(daemonPrefix).main}`);
    await expect(startNginx({ prefix: daemonPrefix, conf })).rejects.toThrow(/daemon/);
  });
});

describe('nginx reload', () => {
  let prefix: string;
  let backendA: Peer;
  let backendB: Peer;
  let port: number;

  function configRouting(defaultBackend: Peer): string {
    return `${prefixDirectives(prefix).main}\n${sniRoutingStream(port, {}, defaultBackend.port)}`;
  }

  beforeAll(async () => {
    requireNginx();
    const dir = await temporaryDir();
    prefix = await createNginxPrefix();
    temporaryDirs.push(prefix);
    const ca = await createCa(dir, 'Reload CA');
    const certificate: CertificateFiles = await issueCertificate(ca, { commonName: 'reload.example.com', sans: ['reload.example.com'] });
    [backendA, backendB] = await Promise.all([
      startPeer(startTlsBackend({ name: 'before', cert: certificate.certPem, key: certificate.keyPem })),
      startPeer(startTlsBackend({ name: 'after', cert: certificate.certPem, key: certificate.keyPem })),
    ]);
    port = await freePort();
  });

  it('applies a new configuration and keeps the old one when the new one is rejected', async () => {
    const conf = await writeConf(prefix, configRouting(backendA));
    const nginx = await startNginx({ prefix, conf, ports: [port] });
    expect((await tlsProbe({ port, servername: 'reload.example.com' })).data).toBe('hello from before sni=reload.example.com\n');

    await writeConf(prefix, configRouting(backendB));
    await nginx.reload();
    expect((await tlsProbe({ port, servername: 'reload.example.com' })).data).toBe('hello from after sni=reload.example.com\n');

    await writeConf(prefix, `${configRouting(backendA)}\nbogus_directive on;\n`);
    await expect(nginx.reload()).rejects.toThrow(/unknown directive "bogus_directive"/);
    expect((await tlsProbe({ port, servername: 'reload.example.com' })).data).toBe('hello from after sni=reload.example.com\n');

    await nginx.stop();
    expect((await tlsProbe({ port })).outcome).toBe('error');
  });
});
