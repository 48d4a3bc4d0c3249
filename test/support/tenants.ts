import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { CertificateFiles } from './pki.js';
import { tlsSecretManifest } from './pki.js';

/**
 * Many small tenants in one cluster, as YAML manifests: each site is an Ingress in namespace `web` with
 * one host, a Service that is in the input (so nginx never has to resolve a cluster DNS name), and
 * optionally its own TLS Secret. Used by the output-folder and quarantine tests.
 */

export interface Site {
  /** Ingress `ing-<name>`, Service `svc-<name>`. */
  readonly name: string;
  readonly host: string;
  /** Name of a TLS Secret for the host; the Secret itself is added by `tlsSecret`. */
  readonly secret?: string;
  /** `web` unless given. */
  readonly namespace?: string;
  /** The Ingress's creationTimestamp, 2025-01-01 unless given. */
  readonly created?: string;
  readonly annotations?: Readonly<Record<string, string>>;
}

export const ingressClass = stringify({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'IngressClass',
  metadata: { name: 'nginx', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
  spec: { controller: 'k8s.io/ingress-nginx' },
});

/** The Service and the Ingress of a site; `index` picks a distinct cluster IP. */
export function siteManifests(site: Site, index: number): string[] {
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${site.name}`, namespace: site.namespace ?? 'web' },
    spec: { clusterIP: `10.96.${Math.floor(index / 250)}.${(index % 250) + 1}`, ports: [{ name: 'http', port: 80 }] },
  };
  const ingress = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: `ing-${site.name}`,
      namespace: site.namespace ?? 'web',
      creationTimestamp: site.created ?? '2025-01-01T00:00:00Z',
      ...(site.annotations && { annotations: site.annotations }),
    },
    spec: {
      ...(site.secret !== undefined && { tls: [{ hosts: [site.host], secretName: site.secret }] }),
      rules: [
        {
          host: site.host,
          http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: `svc-${site.name}`, port: { number: 80 } } } }] },
        },
      ],
    },
  };
  return [stringify(service), stringify(ingress)];
}

export function tlsSecret(name: string, certificate: CertificateFiles): string {
  return tlsSecretManifest({ name, namespace: 'web', certificate });
}

/** Sites `site-0` … `site-<count-1>` on `<name>.example.com`, with the names in `poisoned` on `poison-<i>.example.com`. */
export function numberedSites(count: number, poisoned: readonly number[] = []): Site[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `site-${i}`,
    host: poisoned.includes(i) ? `poison-${i}.example.com` : `site-${i}.example.com`,
  }));
}

/** One multi-document YAML text: the IngressClass, every site, and the extra documents. */
export function manifestsText(sites: readonly Site[], extra: readonly string[] = []): string {
  return [ingressClass, ...sites.flatMap((site, index) => siteManifests(site, index)), ...extra].join('---\n');
}

/**
 * A stand-in for the nginx binary, written to `dir/nginx`: `nginx -t` on a config that contains a
 * poison marker fails with an `[emerg]` line naming it, the way nginx rejects a directive that the
 * allow-lists let through, naming the word it is in as nginx names a file it cannot load (`tls/web_poison-x.pem`);
 * every other config (and every other use) goes to the real nginx. Markers:
 * any `poison-…` name (a host, a regex, or a key file named after a Secret), and the two names `pair-a.example.com`
 * and `pair-b.example.com`, which fail only together. Each `-t` run appends a line to `dir/calls`.
 */
export async function writePoisonNginx(dir: string, realNginx: string): Promise<{ binary: string; callLog: string }> {
  const binary = join(dir, 'nginx');
  const callLog = join(dir, 'calls');
  const script = `#!/bin/sh
conf=""; prev=""
for arg in "$@"; do [ "$prev" = "-c" ] && conf="$arg"; prev="$arg"; done
if [ -n "$conf" ]; then
  echo "$conf" >> '${callLog}'
  hit=$(grep -n -o -m1 -E '[A-Za-z0-9_./-]*poison-[a-z0-9.-]+' "$conf" | head -n 1)
  if [ -n "$hit" ]; then
    echo "nginx: [emerg] unknown directive \\"\${hit#*:}\\" in $conf:\${hit%%:*}" >&2
    echo "nginx: configuration file $conf test failed" >&2
    exit 1
  fi
  if grep -q 'pair-a\\.example\\.com' "$conf" && grep -q 'pair-b\\.example\\.com' "$conf"; then
    echo "nginx: [emerg] pair-a and pair-b cannot be served together in $conf:1" >&2
    echo "nginx: configuration file $conf test failed" >&2
    exit 1
  fi
fi
exec '${realNginx}' "$@"
`;
  await writeFile(binary, script);
  await chmod(binary, 0o755);
  return { binary, callLog };
}
