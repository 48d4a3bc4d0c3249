import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSigned, tlsSecretManifest } from './pki.js';

/**
 * Manifests with script and markup payloads in every field a report shows: the file name, resource
 * names, hosts, paths, annotation names and values, and a certificate subject. Each payload would set
 * `window.__pwned` if it ever ran in the review page.
 */
export const payloads = {
  fileName: '<img src=x onerror="window.__pwned=1">.yaml',
  ingressName: '<script>window.__pwned=2</script>',
  annotationValue: '<img src="x" onerror="window.__pwned=3"> [click](https://evil.example/) @everyone | cell',
  host: '<b>bold</b>.example.test',
  path: '/<svg onload="window.__pwned=4">',
  annotationName: 'nginx.ingress.kubernetes.io/<img src="x" onerror="window.__pwned=5">',
  subject: '<img src="x" onerror="window.__pwned=6">',
} as const;

/** Writes the hostile manifests into a new folder (with a base beside them) and returns both paths. */
export async function hostileManifests(): Promise<{ readonly dir: string; readonly input: string; readonly base: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ingress2nginx-hostile-review-'));
  const input = join(dir, 'new');
  const base = join(dir, 'base');
  await mkdir(input);
  await mkdir(base);
  const certificate = await selfSigned(dir, { commonName: payloads.subject, sans: ['cert.example.test'], days: 3650 });
  const service = `apiVersion: v1
kind: Service
metadata: {name: app, namespace: web}
spec: {clusterIP: 10.96.9.10, ports: [{name: http, port: 80}]}
`;
  const ingress = (name: string, host: string, path: string, annotations: Record<string, string>, tls = false) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${JSON.stringify(name)}
  namespace: web
  annotations: ${JSON.stringify(annotations)}
spec:
  ingressClassName: nginx
${tls ? `  tls: [{hosts: [${JSON.stringify(host)}], secretName: cert}]\n` : ''}  rules:
    - host: ${JSON.stringify(host)}
      http:
        paths:
          - {path: ${JSON.stringify(path)}, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
`;
  const documents = [
    service,
    tlsSecretManifest({ name: 'cert', namespace: 'web', certificate }),
    ingress(payloads.ingressName, 'named.example.test', '/', {}),
    ingress('redirect', 'redirect.example.test', '/', { 'nginx.ingress.kubernetes.io/ssl-redirect': payloads.annotationValue }),
    ingress('host', payloads.host, '/', {}),
    ingress('path', 'path.example.test', payloads.path, {}),
    ingress('unknown', 'unknown.example.test', '/', { [payloads.annotationName]: payloads.annotationValue }),
    ingress('cert', 'cert.example.test', '/', {}, true),
  ];
  await writeFile(join(input, payloads.fileName), documents.join('---\n'));
  // In the base, cert.example.test is passed through: the new manifests terminate it, a risky change
  // whose location is the hostile file name.
  const passthrough = ingress('cert', 'cert.example.test', '/', { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' });
  await writeFile(join(base, 'base.yaml'), [service, passthrough].join('---\n'));
  return { dir, input, base };
}
