import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import yaml from 'js-yaml';
import { certificateSet } from './certificates.js';

/**
 * The bench input: a cluster export the size of the one in the issue (~46 MB of YAML).
 *
 * - 10,000 hosts, one Ingress and one Service each, spread over 20 namespaces.
 * - 2,000 `kubernetes.io/tls` Secrets; Secret g covers the five hosts 5g..5g+4 (SAN), all in one namespace.
 * - Every third host is passthrough (`ssl-passthrough: "true"`, path `/` to the Service's https port);
 *   the others terminate TLS with `spec.tls` naming the Secret that covers them, and have three or four paths.
 * - Metadata as in a real `kubectl get -o yaml` export (uid, resourceVersion, creationTimestamp, labels):
 *   Ingresses applied with kubectl (`kubectl.kubernetes.io/last-applied-configuration`), Services from
 *   Helm, Secrets from cert-manager (with `ca.crt`).
 * - One file per namespace and kind (60 multi-document files), in a directory per namespace.
 *
 * With `--ingress-per-certificate`, the Ingresses are laid out the other common way: one per Secret, naming
 * the five hosts it covers with the same paths to one Service, none passed through. Their server blocks
 * are the same but for `server_name`, so nginx can serve them from one.
 */

export const layout = {
  hosts: 10_000,
  namespaces: 20,
  hostsPerCertificate: 5,
  passthroughEvery: 3,
  domain: 'apps.bench.example.com',
} as const;

export const certificateCount = layout.hosts / layout.hostsPerCertificate;

/** Names the host layout, so the certificate cache is not reused for other host names. */
const scheme = `v1:${layout.hosts}:${layout.hostsPerCertificate}:${layout.namespaces}:${layout.domain}`;

export const cacheDir = join(tmpdir(), 'ingress2nginx-bench-cache-v1');

export interface GeneratedInput {
  readonly dir: string;
  readonly files: number;
  readonly bytes: number;
  readonly ingresses: number;
  readonly services: number;
  readonly secrets: number;
  readonly passthroughHosts: number;
  readonly terminatedHosts: number;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const namespaceOf = (group: number): string => `team-${pad(group % layout.namespaces, 2)}`;
const groupOf = (host: number): number => Math.floor(host / layout.hostsPerCertificate);
const appName = (host: number): string => `app-${pad(host, 5)}`;
const hostName = (host: number): string => `${appName(host)}.${namespaceOf(groupOf(host))}.${layout.domain}`;
const secretName = (group: number): string => `tls-${pad(group, 4)}`;
const isPassthrough = (host: number): boolean => host % layout.passthroughEvery === 0;

function uid(seed: string): string {
  const h = createHash('sha1').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const epoch = Date.parse('2024-03-01T08:00:00Z');
const created = (n: number): string => new Date(epoch + n * 61_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

type Metadata = { labels: Record<string, string>; annotations: Record<string, string> };

/** Services come from a Helm chart. */
function helmMetadata(name: string, namespace: string): Metadata {
  return {
    labels: {
      'app.kubernetes.io/name': name,
      'app.kubernetes.io/instance': `${namespace}-${name}`,
      'app.kubernetes.io/component': 'server',
      'app.kubernetes.io/part-of': namespace,
      'app.kubernetes.io/managed-by': 'Helm',
      'helm.sh/chart': 'web-app-3.14.2',
    },
    annotations: {
      'meta.helm.sh/release-name': name,
      'meta.helm.sh/release-namespace': namespace,
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9102',
    },
  };
}

/** Ingresses are applied by the platform team's pipeline with `kubectl apply`. */
function appliedMetadata(name: string, namespace: string): Metadata {
  return {
    labels: {
      'app.kubernetes.io/name': name,
      'app.kubernetes.io/part-of': namespace,
      'app.kubernetes.io/managed-by': 'platform-ingress-pipeline',
    },
    annotations: {},
  };
}

/** What `kubectl apply` leaves behind: the applied object as one line of JSON. */
function withLastApplied<T extends { metadata: { annotations: Record<string, string> } }>(object: T): T {
  const applied = JSON.stringify(object);
  object.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] = `${applied}\n`;
  return object;
}

function ingress(host: number): object {
  const name = appName(host);
  const namespace = namespaceOf(groupOf(host));
  const { labels, annotations } = appliedMetadata(name, namespace);
  const server = hostName(host);
  const metadata = { name, namespace, labels, annotations };
  let spec: object;
  if (isPassthrough(host)) {
    annotations['nginx.ingress.kubernetes.io/ssl-passthrough'] = 'true';
    spec = {
      ingressClassName: 'nginx',
      rules: [
        {
          host: server,
          http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name, port: { name: 'https' } } } }] },
        },
      ],
    };
  } else {
    if (host % 4 === 1) annotations['nginx.ingress.kubernetes.io/force-ssl-redirect'] = 'true';
    if (host % 7 === 2) annotations['nginx.ingress.kubernetes.io/backend-protocol'] = 'GRPC';
    annotations['cert-manager.io/cluster-issuer'] = 'internal-ca';
    spec = {
      ingressClassName: 'nginx',
      tls: [{ hosts: [server], secretName: secretName(groupOf(host)) }],
      rules: [
        {
          host: server,
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name, port: { number: 80 } } } },
              { path: '/api/v1', pathType: 'Prefix', backend: { service: { name, port: { name: 'http' } } } },
              { path: '/healthz', pathType: 'Exact', backend: { service: { name, port: { number: 80 } } } },
              ...(host % 2 === 0
                ? [{ path: '/static', pathType: 'ImplementationSpecific', backend: { service: { name, port: { number: 80 } } } }]
                : []),
            ],
          },
        },
      ],
    };
  }
  const object = withLastApplied({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata, spec });
  Object.assign(object.metadata, {
    creationTimestamp: created(host),
    generation: 1,
    resourceVersion: String(1_000_000 + host * 3),
    uid: uid(`ingress/${namespace}/${name}`),
  });
  return { ...object, status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } } };
}

/** The Ingress of `--ingress-per-certificate`: the hosts of one Secret, the same paths, one Service. */
function certificateIngress(group: number): object {
  const name = `site-${pad(group, 4)}`;
  const namespace = namespaceOf(group);
  const { labels, annotations } = appliedMetadata(name, namespace);
  annotations['cert-manager.io/cluster-issuer'] = 'internal-ca';
  const service = appName(group * layout.hostsPerCertificate);
  const paths = [
    { path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } },
    { path: '/api/v1', pathType: 'Prefix', backend: { service: { name: service, port: { name: 'http' } } } },
    { path: '/healthz', pathType: 'Exact', backend: { service: { name: service, port: { number: 80 } } } },
  ];
  const spec = {
    ingressClassName: 'nginx',
    tls: [{ hosts: hostsOf(group), secretName: secretName(group) }],
    rules: hostsOf(group).map((host) => ({ host, http: { paths } })),
  };
  const object = withLastApplied({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace, labels, annotations }, spec });
  Object.assign(object.metadata, {
    creationTimestamp: created(group * layout.hostsPerCertificate),
    generation: 1,
    resourceVersion: String(3_000_000 + group),
    uid: uid(`ingress/${namespace}/${name}`),
  });
  return { ...object, status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } } };
}

function service(host: number): object {
  const name = appName(host);
  const namespace = namespaceOf(groupOf(host));
  const { labels, annotations } = helmMetadata(name, namespace);
  const spec = {
    type: 'ClusterIP',
    selector: { 'app.kubernetes.io/name': name, 'app.kubernetes.io/instance': `${namespace}-${name}` },
    ports: [
      { name: 'http', port: 80, protocol: 'TCP', targetPort: 'http' },
      { name: 'https', port: 443, protocol: 'TCP', targetPort: 'https' },
    ],
  };
  const object = { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace, labels, annotations }, spec };
  const clusterIP = `10.96.${Math.floor(host / 250) + 1}.${(host % 250) + 2}`;
  Object.assign(object.metadata, {
    creationTimestamp: created(host),
    resourceVersion: String(1_000_001 + host * 3),
    uid: uid(`service/${namespace}/${name}`),
  });
  Object.assign(object.spec, {
    clusterIP,
    clusterIPs: [clusterIP],
    internalTrafficPolicy: 'Cluster',
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    sessionAffinity: 'None',
  });
  return { ...object, status: { loadBalancer: {} } };
}

function secret(group: number, material: { certPem: string; keyPem: string }, caPem: string): object {
  const name = secretName(group);
  const namespace = namespaceOf(group);
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: {
      name,
      namespace,
      labels: { 'controller.cert-manager.io/fao': 'true' },
      annotations: {
        'cert-manager.io/alt-names': hostsOf(group).join(','),
        'cert-manager.io/certificate-name': name,
        'cert-manager.io/common-name': hostsOf(group)[0]!,
        'cert-manager.io/issuer-kind': 'ClusterIssuer',
        'cert-manager.io/issuer-name': 'internal-ca',
      },
      creationTimestamp: created(group * layout.hostsPerCertificate),
      resourceVersion: String(2_000_000 + group),
      uid: uid(`secret/${namespace}/${name}`),
    },
    data: { 'ca.crt': b64(caPem), 'tls.crt': b64(material.certPem), 'tls.key': b64(material.keyPem) },
  };
}

function hostsOf(group: number): string[] {
  return Array.from({ length: layout.hostsPerCertificate }, (_, k) => hostName(group * layout.hostsPerCertificate + k));
}

function toYaml(objects: readonly object[]): string {
  return objects.map((o) => `---\n${yaml.dump(o, { lineWidth: -1, noRefs: true, quotingType: '"' })}`).join('');
}

/** Writes the input set into `dir` (which should be empty). Certificates come from the cache when possible. */
export async function generateInput(
  dir: string,
  log: (line: string) => void = () => {},
  options: { readonly ingressPerCertificate?: boolean } = {},
): Promise<GeneratedInput> {
  const groups = Array.from({ length: certificateCount }, (_, g) => hostsOf(g));
  const certificates = await certificateSet(cacheDir, scheme, groups, log);

  const byNamespace = new Map<string, { ingresses: object[]; services: object[]; secrets: object[] }>();
  const bucket = (namespace: string): { ingresses: object[]; services: object[]; secrets: object[] } => {
    let entry = byNamespace.get(namespace);
    if (!entry) byNamespace.set(namespace, (entry = { ingresses: [], services: [], secrets: [] }));
    return entry;
  };
  const perCertificate = options.ingressPerCertificate ?? false;
  for (let host = 0; host < layout.hosts; host++) {
    const entry = bucket(namespaceOf(groupOf(host)));
    if (!perCertificate) entry.ingresses.push(ingress(host));
    entry.services.push(service(host));
  }
  groups.forEach((_, group) => {
    const entry = bucket(namespaceOf(group));
    if (perCertificate) entry.ingresses.push(certificateIngress(group));
    entry.secrets.push(secret(group, certificates.leaves[group]!, certificates.caPem));
  });

  let bytes = 0;
  let files = 0;
  for (const [namespace, entry] of [...byNamespace].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const nsDir = join(dir, namespace);
    await mkdir(nsDir, { recursive: true });
    for (const [kind, objects] of Object.entries(entry)) {
      const text = toYaml(objects);
      await writeFile(join(nsDir, `${kind}.yaml`), text);
      bytes += Buffer.byteLength(text);
      files++;
    }
  }
  const passthroughHosts = perCertificate ? 0 : Array.from({ length: layout.hosts }, (_, h) => h).filter(isPassthrough).length;
  return {
    dir,
    files,
    bytes,
    ingresses: perCertificate ? certificateCount : layout.hosts,
    services: layout.hosts,
    secrets: certificateCount,
    passthroughHosts,
    terminatedHosts: layout.hosts - passthroughHosts,
  };
}

// Run as a script (the bench does this in a child process, so generation does not count towards the
// bench process's peak memory): `node dist/bench/generate.js DIR` prints the summary as JSON.
/** The objects of a generated input, as created through the API: without what the server fills in. */
export async function generatedObjects(inputDir: string): Promise<Record<string, unknown>[]> {
  const objects: Record<string, unknown>[] = [];
  for (const namespace of (await readdir(inputDir)).sort()) {
    for (const file of (await readdir(join(inputDir, namespace))).sort()) {
      for (const document of yaml.loadAll(await readFile(join(inputDir, namespace, file), 'utf8'), undefined, { schema: yaml.CORE_SCHEMA })) {
        const object = document as Record<string, unknown> & { metadata: Record<string, unknown> };
        delete object.metadata['uid'];
        delete object.metadata['resourceVersion'];
        delete object.metadata['creationTimestamp'];
        objects.push(object);
      }
    }
  }
  return objects;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dir, layoutFlag, ...rest] = process.argv.slice(2);
  if (!dir || (layoutFlag !== undefined && layoutFlag !== '--ingress-per-certificate') || rest.length > 0) {
    process.stderr.write('usage: generate.js DIR [--ingress-per-certificate]\n');
    process.exit(2);
  }
  const summary = await generateInput(dir, (line) => process.stderr.write(`${line}\n`), { ingressPerCertificate: layoutFlag !== undefined });
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}
