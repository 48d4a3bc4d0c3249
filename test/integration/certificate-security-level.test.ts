import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKeyPair } from '../../src/translate/secrets/certificates.js';
import { runCli } from '../support/cli.js';
import { createNginxPrefix, nginxTest, prefixDirectives } from '../support/nginx.js';
import {
  createCa,
  issueCertificate,
  selfSigned,
  tlsSecretManifest,
  type CertificateAuthority,
  type CertificateFiles,
} from '../support/pki.js';

/**
 * OpenSSL 3 at security level 2 (Debian 12, the official nginx image) refuses to load a certificate whose
 * chain has a weak key or a weak signature digest, and then `nginx -t` fails the whole configuration.
 * Each case here is put before the real nginx, as `ssl_certificate` and as `proxy_ssl_certificate`, and
 * parseKeyPair must refuse exactly the chains nginx refuses.
 */

interface Case {
  readonly name: string;
  /** Leaf first; its key is the pair's key. */
  readonly chain: () => readonly CertificateFiles[];
  /** nginx's error for a refused chain; undefined when nginx loads it. */
  readonly nginxError: RegExp | undefined;
  /** The problem parseKeyPair reports, for a refused chain. */
  readonly problem?: RegExp;
}

let dir: string;
let pki: Record<string, CertificateFiles>;
let roots: { ec: CertificateAuthority; rsa: CertificateAuthority; sha1Rsa: CertificateAuthority; ed25519: CertificateAuthority };
let intermediates: { sha1: CertificateAuthority; rsa1024: CertificateAuthority };

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'i2n-security-level-'));
  const [ec, rsa, sha1Rsa, ed25519] = await Promise.all([
    createCa(dir, 'EC root'),
    createCa(dir, 'RSA root', { keyType: 'rsa-2048' }),
    createCa(dir, 'SHA-1 self-signed root', { keyType: 'rsa-2048', signature: { digest: 'sha1' } }),
    createCa(dir, 'Ed25519 root', { keyType: 'ed25519' }),
  ]);
  roots = { ec, rsa, sha1Rsa, ed25519 };
  const [sha1, rsa1024] = await Promise.all([
    createCa(dir, 'SHA-1 intermediate', { issuer: ec, signature: { digest: 'sha1' } }),
    createCa(dir, 'RSA-1024 intermediate', { issuer: ec, keyType: 'rsa-1024' }),
  ]);
  intermediates = { sha1, rsa1024 };
  const leaf = (commonName: string) => ({ commonName, sans: [commonName] });
  const entries = await Promise.all(
    Object.entries({
      ecLeaf: issueCertificate(ec, leaf('ec.example.test')),
      rsa2048: issueCertificate(ec, { ...leaf('rsa2048.example.test'), keyType: 'rsa-2048' }),
      rsa1024: issueCertificate(ec, { ...leaf('rsa1024.example.test'), keyType: 'rsa-1024' }),
      rsa1962: issueCertificate(ec, { ...leaf('rsa1962.example.test'), keyType: 'rsa-1962' }),
      rsa1963: issueCertificate(ec, { ...leaf('rsa1963.example.test'), keyType: 'rsa-1963' }),
      p192: issueCertificate(ec, { ...leaf('p192.example.test'), keyType: 'ec-p192' }),
      ed25519Key: issueCertificate(ec, { ...leaf('ed25519.example.test'), keyType: 'ed25519' }),
      sha1Signed: issueCertificate(ec, { ...leaf('sha1.example.test'), signature: { digest: 'sha1' } }),
      md5Signed: issueCertificate(rsa, { ...leaf('md5.example.test'), signature: { digest: 'md5' } }),
      pssSha1: issueCertificate(rsa, { ...leaf('pss-sha1.example.test'), signature: { digest: 'sha1', pss: true } }),
      pssSha256: issueCertificate(rsa, { ...leaf('pss-sha256.example.test'), signature: { pss: true } }),
      ed25519Signed: issueCertificate(ed25519, leaf('by-ed25519.example.test')),
      underSha1Intermediate: issueCertificate(sha1, leaf('under-sha1.example.test')),
      underRsa1024Intermediate: issueCertificate(rsa1024, leaf('under-rsa1024.example.test')),
      underSha1Root: issueCertificate(sha1Rsa, leaf('under-sha1-root.example.test')),
      selfSignedSha1: selfSigned(dir, { ...leaf('self-sha1.example.test'), signature: { digest: 'sha1' } }),
      selfSignedRsa1024: selfSigned(dir, { ...leaf('self-rsa1024.example.test'), keyType: 'rsa-1024' }),
    }).map(async ([name, issued]) => [name, await issued] as const),
  );
  pki = Object.fromEntries(entries);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const eeKeyTooSmall = /ee key too small/;
const caKeyTooSmall = /ca key too small/;
const mdTooWeak = /ca md too weak/;

const cases: readonly Case[] = [
  { name: 'EC P-256 leaf, SHA-256', chain: () => [pki.ecLeaf!], nginxError: undefined },
  { name: 'RSA-2048 leaf', chain: () => [pki.rsa2048!], nginxError: undefined },
  {
    name: 'RSA-1024 leaf',
    chain: () => [pki.rsa1024!],
    nginxError: eeKeyTooSmall,
    problem: /^tls\.crt: the certificate has an RSA key of 1024 bits; OpenSSL security level 2 needs at least 2048/,
  },
  { name: 'RSA-1962 leaf (just below 112 bits)', chain: () => [pki.rsa1962!], nginxError: eeKeyTooSmall, problem: /RSA key of 1962 bits/ },
  { name: 'RSA-1963 leaf (112 bits)', chain: () => [pki.rsa1963!], nginxError: undefined },
  { name: 'EC P-192 leaf', chain: () => [pki.p192!], nginxError: eeKeyTooSmall, problem: /EC key on curve prime192v1 \(192 bits\)/ },
  { name: 'Ed25519 leaf', chain: () => [pki.ed25519Key!], nginxError: undefined },
  {
    name: 'leaf signed with SHA-1',
    chain: () => [pki.sha1Signed!],
    nginxError: mdTooWeak,
    problem: /^tls\.crt: the certificate is signed with SHA-1, which OpenSSL security level 2 refuses/,
  },
  { name: 'leaf signed with MD5', chain: () => [pki.md5Signed!], nginxError: mdTooWeak, problem: /signed with MD5/ },
  { name: 'leaf signed with RSASSA-PSS, SHA-1', chain: () => [pki.pssSha1!], nginxError: mdTooWeak, problem: /signed with SHA-1/ },
  { name: 'leaf signed with RSASSA-PSS, SHA-256', chain: () => [pki.pssSha256!], nginxError: undefined },
  { name: 'leaf signed with Ed25519', chain: () => [pki.ed25519Signed!], nginxError: undefined },
  {
    name: 'chain with a SHA-1 intermediate',
    chain: () => [pki.underSha1Intermediate!, intermediates.sha1],
    nginxError: mdTooWeak,
    problem: /^tls\.crt: chain certificate 2 \(CN=SHA-1 intermediate\) is signed with SHA-1/,
  },
  {
    name: 'chain with a SHA-1 intermediate and its root',
    chain: () => [pki.underSha1Intermediate!, intermediates.sha1, roots.ec],
    nginxError: mdTooWeak,
    problem: /chain certificate 2 \(CN=SHA-1 intermediate\) is signed with SHA-1/,
  },
  {
    name: 'chain with an RSA-1024 intermediate',
    chain: () => [pki.underRsa1024Intermediate!, intermediates.rsa1024],
    nginxError: caKeyTooSmall,
    problem: /chain certificate 2 \(CN=RSA-1024 intermediate\) has an RSA key of 1024 bits/,
  },
  { name: 'self-signed leaf, SHA-1', chain: () => [pki.selfSignedSha1!], nginxError: undefined },
  { name: 'leaf and its self-signed SHA-1 root', chain: () => [pki.underSha1Root!, roots.sha1Rsa], nginxError: undefined },
  { name: 'self-signed leaf, RSA-1024', chain: () => [pki.selfSignedRsa1024!], nginxError: eeKeyTooSmall, problem: /RSA key of 1024 bits/ },
];

/** `nginx -t` on a config that loads `chain` + key as `directive` (ssl_certificate or proxy_ssl_certificate). */
async function nginxLoads(chain: readonly CertificateFiles[], directive: 'ssl_certificate' | 'proxy_ssl_certificate') {
  const prefix = await createNginxPrefix();
  try {
    const pemFile = path.join(prefix, 'pair.pem');
    await writeFile(pemFile, chain.map((certificate) => certificate.certPem).join('') + chain[0]!.keyPem, { mode: 0o600 });
    const { main, http } = prefixDirectives(prefix);
    const server =
      directive === 'ssl_certificate'
        ? `server { listen unix:${prefix}/tls.sock ssl; ssl_certificate ${pemFile}; ssl_certificate_key ${pemFile}; }`
        : `server { listen unix:${prefix}/http.sock; location / { proxy_pass https://127.0.0.1:1; proxy_ssl_certificate ${pemFile}; proxy_ssl_certificate_key ${pemFile}; } }`;
    const conf = path.join(prefix, 'nginx.conf');
    await writeFile(conf, `${main}http {\n${http}${server}\n}\n`);
    return await nginxTest(conf, prefix);
  } finally {
    await rm(prefix, { recursive: true, force: true });
  }
}

describe('certificates OpenSSL refuses at security level 2', () => {
  it.each(cases)('parseKeyPair agrees with nginx: $name', async ({ chain, nginxError, problem }) => {
    const certificates = chain();
    for (const directive of ['ssl_certificate', 'proxy_ssl_certificate'] as const) {
      const nginx = await nginxLoads(certificates, directive);
      if (nginxError === undefined) expect(nginx, directive).toMatchObject({ ok: true });
      else expect(nginx.output, directive).toMatch(nginxError);
      expect(nginx.ok, directive).toBe(nginxError === undefined);
    }
    const pair = parseKeyPair(certificates.map((certificate) => certificate.certPem).join(''), certificates[0]!.keyPem);
    if (nginxError === undefined) {
      expect(pair).toMatchObject({ ok: true });
    } else {
      expect(pair.ok).toBe(false);
      if (!pair.ok) expect(pair.problem).toMatch(problem ?? /never/);
    }
  });

  it('serves an Ingress whose Secret has an RSA-1024 certificate with the default certificate, with an error, and nginx -t passes', async () => {
    const inputDir = await mkdtemp(path.join(dir, 'input-'));
    const output = path.join(dir, 'rendered');
    await writeFile(
      path.join(inputDir, 'weak.yaml'),
      [
        tlsSecretManifest({ name: 'weak-tls', namespace: 'web', certificate: pki.rsa1024! }),
        tlsSecretManifest({ name: 'good-tls', namespace: 'web', certificate: pki.rsa2048! }),
        `apiVersion: v1
kind: Service
metadata: {name: app, namespace: web}
spec: {clusterIP: 10.0.0.10, ports: [{port: 80}]}
`,
        ...[
          ['weak', 'rsa1024.example.test'],
          ['good', 'rsa2048.example.test'],
        ].map(
          ([name, host]) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ${name}, namespace: web}
spec:
  ingressClassName: nginx
  tls: [{hosts: [${host}], secretName: ${name}-tls}]
  rules:
    - host: ${host}
      http:
        paths: [{path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}]
`,
        ),
      ].join('---\n'),
    );
    const { exitCode, stderr } = await runCli(['render', '-f', inputDir, '-o', output, '--check', '--run-dir', path.join(dir, 'run')]);
    expect(stderr).toMatch(
      /weak\.yaml:\d+:\d+: error \[tls-secret-invalid\] Ingress web\/weak spec\.tls\[0\]\.secretName: Secret web\/weak-tls: tls\.crt: the certificate has an RSA key of 1024 bits; OpenSSL security level 2 needs at least 2048.*; rsa1024\.example\.test is served with the default certificate/,
    );
    expect(stderr).not.toMatch(/nginx -t failed|nginx-rejected/);
    expect(exitCode).toBe(1);
    const conf = await readFile(path.join(output, 'nginx.conf'), 'utf8');
    // A TLS server that names no certificate keeps the default server's SSL context, and so its certificate.
    const tlsServers = conf.split(/\n\s*server \{/).filter((server) => /listen \S+ ssl/.test(server));
    const certificateIn = (server: string | undefined) => server?.match(/ssl_certificate (\S+);/)?.[1];
    const certificateOf = (host: string): string | undefined => {
      const server = tlsServers.find((s) => s.includes(`server_name ${host};`));
      return server === undefined ? undefined : (certificateIn(server) ?? certificateIn(tlsServers.find((s) => s.includes('default_server;'))));
    };
    expect(certificateOf('rsa1024.example.test')).toBe('tls/default.pem');
    expect(certificateOf('rsa2048.example.test')).toBe('tls/web_good-tls.pem');
  });
});
