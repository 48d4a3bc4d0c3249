/**
 * No usable way to reach a cluster: the CLI says so and exits 2. Apart from the client, so that the commands
 * that never reach a cluster can recognise it without loading `@kubernetes/client-node`.
 */
export class ClusterAccessError extends Error {
  override name = 'ClusterAccessError';
}
