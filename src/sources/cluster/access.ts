import { existsSync, readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterAccessError } from './access-error.js';

const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface ClusterAccess {
  readonly config: KubeConfig;
  /** Where the credentials came from, for the log. */
  readonly source: string;
  /** The namespace of this Pod (in-cluster) or of the kubeconfig's context; `default` otherwise. */
  readonly namespace: string;
}

/**
 * `--kubeconfig`, else `KUBECONFIG` (the first file of the list that exists, as kubectl reads it first),
 * else the Pod's service account. Never client-node's `loadFromDefault`, which falls back to
 * `http://localhost:8080` when it finds nothing.
 */
export function loadClusterAccess(options: { readonly kubeconfig?: string; readonly env: NodeJS.ProcessEnv }): ClusterAccess {
  const config = new KubeConfig();
  let source: string;
  if (options.kubeconfig !== undefined) {
    loadFile(config, options.kubeconfig, '--kubeconfig');
    source = options.kubeconfig;
  } else if (options.env['KUBECONFIG']) {
    const files = options.env['KUBECONFIG'].split(':').filter((file) => file !== '');
    const file = files.find((candidate) => existsSync(candidate));
    if (file === undefined) throw new ClusterAccessError(`none of the files in KUBECONFIG exists (${files.join(', ')})`);
    loadFile(config, file, 'KUBECONFIG');
    source = file;
  } else if (options.env['KUBERNETES_SERVICE_HOST'] && existsSync(`${serviceAccountDir}/token`)) {
    config.loadFromCluster();
    source = 'the Pod service account';
  } else {
    throw new ClusterAccessError(
      'no cluster access: pass --kubeconfig PATH, set KUBECONFIG, or run in a Pod with a service account token',
    );
  }
  const cluster = config.getCurrentCluster();
  if (!cluster?.server) throw new ClusterAccessError(`${source} names no cluster server in its current context`);
  return { config, source, namespace: namespaceOf(config, options.env) };
}

function loadFile(config: KubeConfig, file: string, flag: string): void {
  try {
    config.loadFromFile(file);
  } catch (error) {
    throw new ClusterAccessError(`cannot load ${flag} ${file}: ${(error as Error).message.split('\n')[0]}`);
  }
}

function namespaceOf(config: KubeConfig, env: NodeJS.ProcessEnv): string {
  if (env['POD_NAMESPACE']) return env['POD_NAMESPACE'];
  const inCluster = `${serviceAccountDir}/namespace`;
  if (existsSync(inCluster)) return readFileSync(inCluster, 'utf8').trim();
  return config.getContextObject(config.getCurrentContext())?.namespace ?? 'default';
}
