import type { Command } from 'commander';
import type { Diagnostic } from '../model/diagnostics.js';
import { build, type BuildResult } from '../build/build.js';
import { formatAuditJson, formatAuditMarkdown, formatAuditText } from '../report/migration-format.js';
import { migrationReport } from '../report/migration.js';
import { formatSarif } from '../report/sarif.js';
import type { Snapshot } from '../sources/snapshot.js';
import type { TranslateOptions } from '../translate/options.js';
import { collect, diagnosticsOf, exitCodes, readManifests, translateOptionsOf, withCommonOptions, type CliIo } from './common.js';
import { parseSeconds, UsageError, type CommonFlags } from './options.js';

interface AuditFlags extends Omit<CommonFlags, 'filename'> {
  readonly filename?: string[];
  readonly cluster: boolean;
  readonly kubeconfig?: string;
  readonly namespace?: string[];
  readonly upstreams: 'service' | 'endpoints';
  readonly timeout: number;
}

/**
 * `audit`: the migration report, from manifests or from the live cluster. Exit 1 when an Ingress would
 * not be served as written, or with `--strict` when an annotation in use is ignored or unknown; 0
 * otherwise.
 */
export function auditCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  withCommonOptions(
    program
      .command('audit')
      .description('migration report: the ingress-nginx annotations and ConfigMap keys in use, what ingress2nginx does with each, and the Ingresses it would not serve as written'),
    'the report on stdout as text, json or markdown; sarif: the diagnostics',
    'optional',
  )
    .option('--cluster', 'read the live cluster instead of -f manifests (as the cluster mode does: list and watch, then stop)', false)
    .option('--kubeconfig <path>', 'with --cluster: kubeconfig file (default: $KUBECONFIG, else the Pod service account)')
    .option('--namespace <namespace>', 'with --cluster: read only this namespace (repeatable; default: all)', collect)
    .option('--timeout <seconds>', 'with --cluster: give up when every kind has not listed by then; also the limit for each API request', parseSeconds, 30)
    .action(async (flags: AuditFlags) => {
      const fromFiles = flags.filename !== undefined;
      if (fromFiles === flags.cluster) throw new UsageError('give either -f (manifests) or --cluster (the live cluster)');
      if (fromFiles && (flags.kubeconfig !== undefined || flags.namespace !== undefined)) {
        throw new UsageError('--kubeconfig and --namespace go with --cluster');
      }
      const commonFlags: CommonFlags = { ...flags, filename: flags.filename ?? [] };
      const options = await translateOptionsOf(commonFlags, io, false);
      const { snapshot, result, diagnostics } = fromFiles ? await fromManifests(commonFlags, options, io) : await fromCluster(flags, options, io);
      const report = migrationReport(snapshot, { ...result, diagnostics }, flags.configmap);
      const formats = { json: formatAuditJson, markdown: formatAuditMarkdown, text: formatAuditText };
      io.stdout(flags.format === 'sarif' ? formatSarif(diagnostics) : formats[flags.format](report));
      const blocked = report.ingressesWithErrors.length > 0;
      const lossy = report.annotations.some((usage) => usage.status === 'ignored' || usage.status === 'unknown');
      setExitCode(blocked || (flags.strict && lossy) ? exitCodes.inputErrors : exitCodes.clean);
    });
}

interface Audited {
  readonly snapshot: Snapshot;
  readonly result: BuildResult;
  /** With file and line, when read from files. */
  readonly diagnostics: readonly Diagnostic[];
}

async function fromManifests(flags: CommonFlags, options: TranslateOptions, io: CliIo): Promise<Audited> {
  const source = await readManifests(flags, io);
  const result = build(source.snapshot, options);
  return { snapshot: source.snapshot, result, diagnostics: await diagnosticsOf(source, result) };
}

async function fromCluster(flags: AuditFlags, options: TranslateOptions, io: CliIo): Promise<Audited> {
  // Loaded only here: the cluster client costs every command that does not use it 0.3 s and 70 MB.
  const [{ loadClusterAccess }, { ApiClient }, { readClusterOnce }] = await Promise.all([
    import('../sources/cluster/access.js'),
    import('../sources/cluster/client.js'),
    import('../sources/cluster/once.js'),
  ]);
  const access = loadClusterAccess({ ...(flags.kubeconfig !== undefined && { kubeconfig: flags.kubeconfig }), env: io.env ?? process.env });
  // The cluster's objects are as applied: a missing Secret is missing.
  const fromApi: TranslateOptions = { ...options, expectClusterProvided: false };
  const snapshot = await readClusterOnce({
    client: new ApiClient(access.config, flags.timeout * 1000),
    namespaces: flags.namespace ?? [],
    upstreams: flags.upstreams,
    watchNamespaces: options.snippets?.namespaceSelector !== undefined,
    references: (partial) => build(partial, fromApi).references,
    timeoutMs: flags.timeout * 1000,
  });
  const result = build(snapshot, fromApi);
  return { snapshot, result, diagnostics: result.diagnostics };
}
