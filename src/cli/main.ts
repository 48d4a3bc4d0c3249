import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { createTwoFilesPatch } from 'diff';
import { nginxBinary, type NginxCheck } from '../apply/check.js';
import { EnvironmentError } from '../apply/environment.js';
import { stageBuild } from '../apply/staged-build.js';
import { workerOwner } from '../apply/worker-user.js';
import { listFiles, managedFolders, OutputFolder } from '../apply/write.js';
import { hasErrors, type Diagnostic } from '../model/diagnostics.js';
import { mainConfigName } from '../model/nginx.js';
import { build, type BuildResult } from '../render/build.js';
import { InputError, readInputs, type FileSourceResult } from '../sources/files.js';
import { refinePositions } from '../sources/positions.js';
import { ClusterAccessError } from '../sources/cluster/access.js';
import { defaultRunTiming, runSidecar } from '../sidecar/run.js';
import {
  defaults,
  parseAbsoluteFile,
  parseAccessLog,
  parseDomain,
  parseDomainList,
  parseClassName,
  parseNamespacedName,
  parseNow,
  parsePort,
  parseResolver,
  parseRunDir,
  parseStreamModule,
  parseVersion,
  parseListenAddress,
  toBaseTranslateOptions,
  toTranslateOptions,
  UsageError,
  type CommonFlags,
  type TranslateFlags,
} from './options.js';
import { formatJson, formatSummary, formatText } from './reporters.js';
import { formatAuditJson, formatAuditMarkdown, formatAuditText } from './audit-reporters.js';
import { migrationReport, type MigrationReport } from '../audit/migration.js';

export interface CliIo {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly now: () => Date;
  /** `run` only: the environment (KUBECONFIG, POD_NAME, ...). Default: process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** `run` only: resolves when the process is asked to stop (SIGTERM or SIGINT). */
  readonly stopRequested?: () => Promise<void>;
  /** `run` only: told the metrics port once it listens. */
  readonly onListening?: (port: number) => void;
}

export const exitCodes = { clean: 0, inputErrors: 1, failure: 2 } as const;

/** Thin CLI: parse flags, run the pipeline, hand diagnostics to a reporter, map outcomes to exit codes. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = exitCodes.clean;
  const program = new Command('ingress2nginx')
    .description('Render Kubernetes Ingress (ingress-nginx dialect) into configuration for a stock nginx.')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(run with --help for usage)');

  withCommonOptions(program.command('render').description('render manifests into DIR/nginx.conf and key material'))
    .requiredOption('-o, --output <dir>', 'output directory')
    .option('--check', 'run nginx -t on the result before it replaces DIR; leave out resources nginx rejects', false)
    .option('--nginx-bin <path>', 'nginx binary for --check (default: $NGINX_BIN or nginx)')
    .action(async (flags: CommonFlags & { output: string; check: boolean; nginxBin?: string }) => {
      const options = toTranslateOptions(flags, io.now(), readResolvConf);
      const source = await readSources(flags, io);
      const folder = await OutputFolder.open(flags.output, { workerOwner: await workerOwner(nginxBinary(flags.nginxBin)) });
      try {
        const rendered = await stageBuild(folder, source.snapshot, options, flags.check ? nginxBinary(flags.nginxBin) : undefined);
        const { result, nginx } = rendered;
        const diagnostics = await diagnosticsOf(source, result);
        if (!rendered.staged) {
          // The output folder keeps the last good config: nothing was moved into it.
          report(diagnostics, result, flags, io, nginx);
          exitCode = exitCodes.failure;
          return;
        }
        await folder.commit(rendered.staged);
        if (rendered.rejected) await folder.keepRejected(rendered.rejected);
        report(diagnostics, result, flags, io, nginx);
        exitCode = outcome(diagnostics, flags.strict);
        io.stdout(
          `wrote ${join(flags.output, mainConfigName)}: ${result.model.http.virtualHosts.length} host(s), ` +
            `${result.model.stream.frontends.reduce((n, f) => n + f.routes.length, 0)} SNI route(s), ` +
            `${result.model.files.length} key file(s)\n`,
        );
        if (nginx) io.stdout('nginx -t: configuration is valid\n');
      } finally {
        await folder.close();
      }
    });

  withCommonOptions(program.command('validate').description('report diagnostics only; write nothing')).action(
    async (flags: CommonFlags) => {
      const options = toTranslateOptions(flags, io.now(), readResolvConf);
      const source = await readSources(flags, io);
      const result = build(source.snapshot, options);
      const diagnostics = await diagnosticsOf(source, result);
      report(diagnostics, result, flags, io);
      exitCode = outcome(diagnostics, flags.strict);
    },
  );

  withCommonOptions(program.command('diff').description('exit 1 with a unified diff when DIR is not what render would write'))
    .requiredOption('--against <dir>', 'a directory written by render')
    .action(async (flags: CommonFlags & { against: string }) => {
      const options = toTranslateOptions(flags, io.now(), readResolvConf);
      const source = await readSources(flags, io);
      const result = build(source.snapshot, options);
      const diagnostics = await diagnosticsOf(source, result);
      report(diagnostics, result, flags, io);
      const drift = await driftAgainst(flags.against, result);
      if (drift.length > 0) io.stdout(drift.join(''));
      exitCode = drift.length > 0 ? exitCodes.inputErrors : outcome(diagnostics, flags.strict);
    });

  withCommonOptions(
    program
      .command('audit')
      .description('migration report: the ingress-nginx annotations and ConfigMap keys in use, what ingress2nginx does with each, and the Ingresses it would not serve as written'),
    ['text', 'json', 'markdown'],
  ).action(async (flags: AuditFlags) => {
    const options = toTranslateOptions({ ...flags, format: 'text' }, io.now(), readResolvConf);
    const source = await readSources({ ...flags, format: 'text' }, io);
    const result = build(source.snapshot, options);
    const report = migrationReport(source.snapshot, { ...result, diagnostics: await diagnosticsOf(source, result) }, flags.configmap);
    io.stdout(auditFormats[flags.format](report));
    const blocked = report.ingressesWithErrors.length > 0;
    const lossy = report.annotations.some((usage) => usage.status === 'ignored' || usage.status === 'unknown');
    exitCode = blocked || (flags.strict && lossy) ? exitCodes.inputErrors : exitCodes.clean;
  });

  withTranslateOptions(program.command('run').description('watch the cluster and keep a stock nginx beside it configured (sidecar)'))
    .requiredOption('-o, --output <dir>', 'folder nginx reads its config from (shared with the nginx container)')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, else the Pod service account)')
    .option('--namespace <namespace>', 'watch only this namespace (repeatable; default: all)', collect)
    .option('--spawn-nginx', 'start nginx as a child process and restart it when it exits', false)
    .option('--nginx-bin <path>', 'nginx binary for -V, -t and (with --spawn-nginx) to run (default: $NGINX_BIN or nginx)')
    .option('--metrics-address <host:port>', '/healthz, /readyz and /metrics', parseListenAddress, { host: '0.0.0.0', port: 10254 })
    .option('--publish-service <namespace/name>', 'Service whose load-balancer addresses go into Ingress and Gateway status', parseNamespacedName)
    .option('--publish-address <address>', 'address to write into Ingress and Gateway status (repeatable)', collect)
    .option('--election-id <name>', 'name of the leader-election Lease', parseClassName, 'ingress2nginx')
    .option('--election-namespace <namespace>', 'namespace of the Lease (default: the Pod namespace)', parseClassName)
    .addOption(
      new Option('--log-format <format>', 'log lines on stdout').choices(['json', 'text']).default(process.stdout.isTTY ? 'text' : 'json'),
    )
    .action(async (flags: TranslateFlags & RunFlags) => {
      if (flags.publishService !== undefined && flags.publishAddress !== undefined) {
        throw new UsageError('give --publish-service or --publish-address, not both');
      }
      exitCode = await runSidecar(
        {
          output: flags.output,
          translate: toBaseTranslateOptions(flags, readResolvConf),
          ...(flags.kubeconfig !== undefined && { kubeconfig: flags.kubeconfig }),
          namespaces: flags.namespace ?? [],
          spawnNginx: flags.spawnNginx,
          nginxBin: nginxBinary(flags.nginxBin),
          metricsHost: flags.metricsAddress.host,
          metricsPort: flags.metricsAddress.port,
          ...(flags.publishService !== undefined && { publishService: flags.publishService }),
          publishAddresses: flags.publishAddress ?? [],
          electionId: flags.electionId,
          ...(flags.electionNamespace !== undefined && { electionNamespace: flags.electionNamespace }),
          upstreams: flags.upstreams,
          logFormat: flags.logFormat,
          timing: defaultRunTiming,
        },
        {
          env: io.env ?? process.env,
          log: io.stdout,
          stopRequested: (io.stopRequested ?? stopSignal)(),
          ...(io.onListening && { onListening: io.onListening }),
        },
      );
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? exitCodes.clean : exitCodes.failure;
    }
    if (
      error instanceof InputError ||
      error instanceof UsageError ||
      error instanceof EnvironmentError ||
      error instanceof ClusterAccessError
    ) {
      io.stderr(`ingress2nginx: ${error.message}\n`);
      return exitCodes.failure;
    }
    io.stderr(`ingress2nginx: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return exitCodes.failure;
  }
}

/** Flags of the commands that read manifests from files. */
function withCommonOptions(command: Command, formats: readonly string[] = ['text', 'json']): Command {
  return withTranslateOptions(
    command
      .requiredOption('-f, --filename <path>', 'manifest file, directory (recursive) or - for stdin; repeatable', collect)
      .addOption(new Option('--format <format>', 'output format').choices([...formats]).default('text'))
      .option('--strict', 'warnings fail too (exit 1)', false),
  )
    .option('--nginx-version <version>', 'nginx version to render for', parseVersion, defaults.nginxVersion)
    .option('--stream-module <path>', 'stream module to load_module, or "none" when built in', parseStreamModule, defaults.streamModule)
    .option('--now <time>', 'check certificate validity at this time instead of now', parseNow);
}

/** Flags of every command that translates, the cluster mode included. */
function withTranslateOptions(command: Command): Command {
  return command
    .option('--ingress-class <name>', 'IngressClass name to serve', parseClassName, defaults.ingressClass)
    .option('--gateway-class <name>', 'GatewayClass name to serve', parseClassName, defaults.gatewayClass)
    .option('--watch-ingress-without-class', 'also serve Ingresses that name no class', false)
    .option('--configmap <namespace/name>', 'controller ConfigMap (ingress-nginx keys)', parseNamespacedName)
    .option('--default-certificate <namespace/name>', 'TLS Secret for the default server', parseNamespacedName)
    .option('--allow-cross-namespace-secrets', 'let proxy-ssl-secret name a Secret in another namespace', false)
    .option('--cluster-domain <domain>', 'cluster DNS domain for Services not in the input', parseDomain, defaults.clusterDomain)
    .option('--resolver <address>', 'DNS server nginx uses to resolve backends known only by name, per request (repeatable; "auto": /etc/resolv.conf)', parseResolver)
    .option('--disable-svc-external-name', 'never use ExternalName Services as backends', false)
    .option('--external-name-suffix <domain>', 'allow ExternalName backends only in this domain (repeatable)', parseDomainList)
    .option('--first-namespace-owns-host', 'a host belongs to the namespace that claimed it first; other namespaces cannot add to it', false)
    .addOption(new Option('--upstreams <mode>', 'reach Services at their ClusterIP, or at their EndpointSlice addresses').choices(['service', 'endpoints']).default('service'))
    .option('--http-port <port>', 'plain HTTP port', parsePort, defaults.httpPort)
    .option('--https-port <port>', 'TLS port, split by SNI', parsePort, defaults.httpsPort)
    .option('--run-dir <dir>', 'absolute directory for pid, unix sockets and temp files', parseRunDir, defaults.runDir)
    .option('--system-ca-bundle <path>', 'CA bundle for BackendTLSPolicy wellKnownCACertificates: System', parseAbsoluteFile, defaults.systemCaBundle)
    .option('--access-log <path>', 'access_log target, e.g. /dev/stdout, or "off"', parseAccessLog, 'off');
}

/** `audit` takes the flags of `validate`, with a markdown format besides text and json. */
type AuditFlags = Omit<CommonFlags, 'format'> & { readonly format: 'text' | 'json' | 'markdown' };

const auditFormats: Record<AuditFlags['format'], (report: MigrationReport) => string> = {
  text: formatAuditText,
  json: formatAuditJson,
  markdown: formatAuditMarkdown,
};

interface RunFlags {
  readonly output: string;
  readonly kubeconfig?: string;
  readonly namespace?: string[];
  readonly spawnNginx: boolean;
  readonly nginxBin?: string;
  readonly metricsAddress: { readonly host: string; readonly port: number };
  readonly publishService?: string;
  readonly publishAddress?: string[];
  readonly electionId: string;
  readonly electionNamespace?: string;
  readonly logFormat: 'json' | 'text';
}

/**
 * SIGTERM or SIGINT, whichever comes first. `on`, not `once`: execa's clean-up of child processes
 * (signal-exit) re-raises a signal when it finds no other listener for it, which would kill us in the
 * middle of stopping.
 */
function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.on('SIGTERM', () => resolve());
    process.on('SIGINT', () => resolve());
  });
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function readResolvConf(): string {
  try {
    return readFileSync('/etc/resolv.conf', 'utf8');
  } catch {
    return '';
  }
}

function readSources(flags: CommonFlags, io: CliIo): Promise<FileSourceResult> {
  return readInputs(flags.filename, { stdin: io.stdin });
}

/** The sources' and the build's diagnostics, each at the line and column of its field. */
function diagnosticsOf(source: FileSourceResult, result: BuildResult): Promise<Diagnostic[]> {
  return refinePositions([...source.diagnostics, ...result.diagnostics], source.snapshot, source.readText);
}

function report(diagnostics: readonly Diagnostic[], result: BuildResult, flags: CommonFlags, io: CliIo, nginx?: NginxCheck): void {
  if (flags.format === 'json') {
    io.stderr(formatJson(diagnostics, result.statuses, nginx));
    return;
  }
  if (diagnostics.length > 0) io.stderr(formatText(diagnostics) + formatSummary(diagnostics));
  if (nginx && !nginx.ok) io.stderr(`nginx -t failed:\n${nginx.output}\n`);
}

function outcome(diagnostics: readonly Diagnostic[], strict: boolean): number {
  const failing = hasErrors(diagnostics) || (strict && diagnostics.some((d) => d.severity === 'warning'));
  return failing ? exitCodes.inputErrors : exitCodes.clean;
}

/** Differences between `dir` and what render would write; key material is named, never shown. */
async function driftAgainst(dir: string, result: BuildResult): Promise<string[]> {
  const drift: string[] = [];
  const nginxConf = result.files.find((f) => f.path === mainConfigName)?.contents ?? '';
  const currentConf = await readFile(join(dir, mainConfigName), 'utf8').catch(() => '');
  if (currentConf !== nginxConf) {
    drift.push(createTwoFilesPatch(join(dir, mainConfigName), `rendered/${mainConfigName}`, currentConf, nginxConf));
  }
  const wanted = new Map(result.model.files.map((f) => [f.path, f.contents]));
  for (const [path, contents] of wanted) {
    const current = await readFile(join(dir, path), 'utf8').catch(() => undefined);
    if (current === undefined) drift.push(`missing: ${join(dir, path)}\n`);
    else if (current !== contents) drift.push(`differs: ${join(dir, path)} (key material, not shown)\n`);
  }
  for (const folder of managedFolders) {
    for (const name of await listFiles(join(dir, folder))) {
      if (!wanted.has(`${folder}/${name}`)) drift.push(`stale: ${join(dir, folder, name)}\n`);
    }
  }
  return drift;
}
