import { constants, readFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { nginxBinary, type NginxCheck } from '../apply/check.js';
import { EnvironmentError, reason } from '../apply/environment.js';
import { hasErrors, type Diagnostic } from '../model/diagnostics.js';
import type { BuildResult } from '../build/build.js';
import { templatesDir } from '../render/render.js';
import { readInputs, type FileSourceResult } from '../sources/files.js';
import { KeyPairCache } from '../translate/secrets/key-pairs.js';
import { refinePositions } from '../sources/positions.js';
import { nginxBuild } from '../sidecar/nginx.js';
import type { TranslateOptions } from '../translate/options.js';
import {
  collectNamespace,
  collectNamespacedName,
  defaults,
  parseLabelSelector,
  parseAbsoluteFile,
  parseAccessLog,
  parseClassName,
  parseDomain,
  parseDomainList,
  parseNamespacedName,
  parseNow,
  parseEndpointResolver,
  parsePort,
  parseResolver,
  parseRunDir,
  parseStreamModule,
  parseVersion,
  nginxTarget,
  toTranslateOptions,
  type CommonFlags,
  type OutputFormat,
  UsageError,
} from './options.js';
import { formatDiagnosticsMarkdown } from '../report/diagnostics-format.js';
import { printable, printableLines } from '../model/printable.js';
import { formatSarif } from '../report/sarif.js';
import { watchedKinds } from '../sources/cluster/kinds.js';
import { formatJson, formatTextReport } from './reporters.js';

/** What every command shares: the I/O it is given, exit codes, flags, reading manifests, reporting diagnostics. */

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

/** 0 clean, 1 the input has errors (`diff`: there are changes), 2 usage or tool failure. */
export const exitCodes = { clean: 0, inputErrors: 1, failure: 2 } as const;

/** `--format` of every command that reports: text for people (stderr, or the command's own text on stdout), the rest for programs (stdout). */
export const outputFormats: readonly OutputFormat[] = ['text', 'json', 'sarif', 'markdown'];

/**
 * Flags of the commands that read manifests from files. What `--format` formats (diagnostics, routes, a
 * diff) is the command's to say in `formatDescription`; every command takes every format. A command
 * that can also read a cluster makes `-f` optional and checks the choice itself.
 */
export function withCommonOptions(command: Command, formatDescription: string, filenames: 'required' | 'optional' = 'required'): Command {
  const filenameFlags = '-f, --filename <path>';
  const filenameDescription = 'manifest file, directory (recursive) or - for stdin; repeatable';
  return withTranslateOptions(
    (filenames === 'required'
      ? command.requiredOption(filenameFlags, filenameDescription, collect)
      : command.option(filenameFlags, filenameDescription, collect))
      .addOption(new Option('--format <format>', formatDescription).choices([...outputFormats]).default('text'))
      .option('--strict', 'warnings fail too (exit 1); a Service without clusterIP or a TLS Secret missing from the input is an error', false)
      .option('-q, --quiet', 'on stderr, only errors (machine output on stdout is complete)', false)
      .option('--allow-empty', 'accept -f input that holds no resource ingress2nginx reads (render then writes a config with no routes)', false),
  )
    .option('--nginx-version <version>', `nginx version to render for, or "auto" to read it from the nginx binary (default: auto with --check, else ${defaults.nginxVersion})`, parseVersion)
    .option('--stream-module <path>', `stream module to load_module, or "none" when built in (default: the nginx binary's with auto, else ${defaults.streamModule})`, parseStreamModule)
    .option('--now <time>', 'check certificate validity at this time instead of now', parseNow);
}

/** Flags of every command that translates, the cluster mode included. */
export function withTranslateOptions(command: Command): Command {
  return command
    .option('--ingress-class <name>', 'IngressClass name to serve', parseClassName, defaults.ingressClass)
    .option('--gateway-class <name>', 'GatewayClass name to serve', parseClassName, defaults.gatewayClass)
    .option('--gateway <namespace/name>', 'serve only this Gateway of the class, its routes and policies, and no Ingress: one data plane per Gateway (repeatable)', collectNamespacedName)
    .option('--watch-ingress-without-class', 'also serve Ingresses that name no class', false)
    .option('--configmap <namespace/name>', 'controller ConfigMap (ingress-nginx keys)', parseNamespacedName)
    .option('--tcp-services-configmap <namespace/name>', 'ConfigMap of TCP services (ingress-nginx format: "port": "namespace/service:port[:PROXY][:PROXY]")', parseNamespacedName)
    .option('--udp-services-configmap <namespace/name>', 'ConfigMap of UDP services (ingress-nginx format: "port": "namespace/service:port")', parseNamespacedName)
    .option('--allow-snippet-annotations', 'render snippet annotations and ConfigMap keys (raw nginx text: see docs/features.md, "Allowing snippets")', false)
    .option('--snippet-namespace <namespace>', 'with snippets allowed: only in this namespace (repeatable)', collectNamespace)
    .option('--snippet-namespace-selector <key=value,...>', 'with snippets allowed: only in namespaces with these labels', parseLabelSelector)
    .option('--default-certificate <namespace/name>', 'TLS Secret for the default server', parseNamespacedName)
    .option('--default-backend-service <namespace/name>', 'Service (its first port) that answers requests no Ingress path matches and the ConfigMap\'s custom-http-errors (ingress-nginx\'s flag); without it nginx answers 404', parseNamespacedName)
    .option('--allow-cross-namespace-secrets', 'let proxy-ssl-secret name a Secret in another namespace', false)
    .option('--allow-cross-namespace-auth-url', 'let auth-url name a Service in another namespace without a ReferenceGrant there', false)
    .option('--cluster-domain <domain>', 'cluster DNS domain for Services not in the input', parseDomain, defaults.clusterDomain)
    .option('--resolver <address>', 'DNS server nginx uses to resolve backends known only by name, per request (repeatable; "auto": /etc/resolv.conf)', parseResolver)
    .option('--disable-svc-external-name', 'never use ExternalName Services as backends', false)
    .option('--external-name-suffix <domain>', 'allow ExternalName backends only in this domain (repeatable)', parseDomainList)
    .option('--first-namespace-owns-host', 'a host belongs to the namespace that claimed it first; other namespaces cannot add to it', false)
    .addOption(new Option('--upstreams <mode>', 'reach Services at their ClusterIP, or at their EndpointSlice addresses').choices(['service', 'endpoints']).default('service'))
    .option('--endpoint-resolver <port>', 'with --upstreams endpoints on nginx 1.27.3 or later: nginx resolves the endpoints at run time from the sidecar\'s resolver on this loopback port, and Pods that come and go need no reload ("off": written in; run serves it, on 10053 unless told)', parseEndpointResolver)
    .option('--unavailable-port <port>', 'with --endpoint-resolver: the loopback port of nginx\'s 503 server, which the resolver gives a Service without endpoints', parsePort, defaults.unavailablePort)
    .option('--http-port <port>', 'plain HTTP port', parsePort, defaults.httpPort)
    .option('--https-port <port>', 'TLS port, split by SNI', parsePort, defaults.httpsPort)
    .option('--run-dir <dir>', 'absolute directory for pid, unix sockets and temp files', parseRunDir, defaults.runDir)
    .option('--system-ca-bundle <path>', 'CA bundle for BackendTLSPolicy wellKnownCACertificates: System and https auth-url certificates', parseAbsoluteFile, defaults.systemCaBundle)
    .option('--access-log <path>', 'access_log target, e.g. /dev/stdout, or "off"', parseAccessLog, 'off')
    .option('--certificates-per-handshake', 'one SSL context for all terminated hosts, certificates read by SNI per handshake (fast reloads; nginx workers must be able to read the key files)', false);
}

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** `version` of this package's package.json (beside `templates/`, from `src/` or `dist/src/`). */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(templatesDir(), '..', 'package.json'), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

export function readResolvConf(): string {
  try {
    return readFileSync('/etc/resolv.conf', 'utf8');
  } catch {
    return '';
  }
}

/** Manifests as given, however few (the base of a diff may be empty: a first change). */
export function readSources(filenames: readonly string[], io: CliIo): Promise<FileSourceResult> {
  return readInputs([...filenames], { stdin: io.stdin });
}

/** Every kind some part of ingress2nginx reads: the cluster mode's list. */
const readKinds: ReadonlySet<string> = new Set(watchedKinds.map((k) => k.kind));

/**
 * The `-f` manifests of a command. Input with no resource of any kind ingress2nginx reads is a usage
 * error (exit 2, nothing written), unless `--allow-empty`: a mistyped path or an empty checkout must not
 * replace a working config with an empty one, nor pass a CI check. Problems reading the documents are
 * shown first, since they may be why nothing was found.
 */
export async function readManifests(flags: Pick<CommonFlags, 'filename' | 'allowEmpty'>, io: CliIo): Promise<FileSourceResult> {
  const source = await readSources(flags.filename, io);
  if (flags.allowEmpty || source.snapshot.objects.some((object) => readKinds.has(object.kind))) return source;
  if (source.diagnostics.length > 0) io.stderr(formatTextReport(source.diagnostics));
  const paths = flags.filename.map((name) => (name === '-' ? 'stdin' : printable(name))).join(', ');
  const others = new Set(source.snapshot.objects.map((object) => printable(object.kind)));
  const found =
    source.files.length === 0 && !flags.filename.includes('-')
      ? 'no .yaml, .yml or .json file'
      : others.size > 0
        ? `only ${[...others].sort().join(', ')}`
        : 'no Kubernetes object';
  throw new UsageError(
    `${paths}: ${found}; none of the kinds ingress2nginx reads (${[...readKinds].join(', ')}). Nothing was written; give --allow-empty if an input without them is meant`,
  );
}

/** The sources' and the build's diagnostics, each at the line and column of its field. */
export function diagnosticsOf(source: FileSourceResult, result: BuildResult): Promise<Diagnostic[]> {
  return refinePositions([...source.diagnostics, ...result.diagnostics], source.snapshot, source.readText);
}

/** What the reporting functions need of the flags. */
export type ReportFlags = Pick<CommonFlags, 'format' | 'quiet'>;

/**
 * Diagnostics as a command's product (`validate`, `render`, `review`, `diff --against`): text on stderr
 * for people, or one JSON, SARIF or markdown document on stdout and nothing else there. nginx's own
 * words on a failed check are in the JSON document, else on stderr.
 */
export function reportDiagnostics(
  diagnostics: readonly Diagnostic[],
  flags: ReportFlags,
  io: CliIo,
  extra: { readonly statuses: BuildResult['statuses']; readonly nginx?: NginxCheck },
): void {
  const { nginx } = extra;
  if (flags.format === 'json') {
    io.stdout(formatJson(diagnostics, extra.statuses, nginx));
    return;
  }
  if (flags.format === 'sarif') io.stdout(formatSarif(diagnostics));
  else if (flags.format === 'markdown') io.stdout(formatDiagnosticsMarkdown(diagnostics));
  else humanDiagnostics(diagnostics, flags, io);
  if (nginx && !nginx.ok) io.stderr(`nginx -t failed:\n${printableLines(nginx.output)}\n`);
}

/** Diagnostics for people on stderr, beside a command's own product; with `--quiet`, only errors. */
export function humanDiagnostics(diagnostics: readonly Diagnostic[], flags: Pick<CommonFlags, 'quiet'>, io: CliIo): void {
  const shown = flags.quiet ? diagnostics.filter((d) => d.severity === 'error') : diagnostics;
  if (shown.length === 0) return;
  const report = formatTextReport(shown);
  // --quiet: the errors alone, without the totals line.
  io.stderr(flags.quiet ? report.slice(0, report.lastIndexOf('\n', report.length - 2) + 1) : report);
}

/** A line about what a command did (`wrote …`), for people: stderr, and not with `--quiet`. */
export function progress(flags: Pick<CommonFlags, 'quiet'>, io: CliIo, line: string): void {
  if (!flags.quiet) io.stderr(`${printable(line)}\n`);
}

export function outcome(diagnostics: readonly Diagnostic[], strict: boolean): number {
  const failing = hasErrors(diagnostics) || (strict && diagnostics.some((d) => d.severity === 'warning'));
  return failing ? exitCodes.inputErrors : exitCodes.clean;
}


/**
 * The translate options of a file-reading command: its flags, and the nginx it renders for (read from
 * `nginx -V` of `nginxBin` when `--nginx-version auto` is given or, with `check`, implied).
 */
export async function translateOptionsOf(flags: CommonFlags, io: CliIo, check: boolean, nginxBin?: string): Promise<TranslateOptions> {
  const target = await nginxTarget(flags, check, () => detectNginx(nginxBinary(nginxBin)));
  // One cache for the command's builds (the quarantine's retries, both sides of a diff).
  return { ...toTranslateOptions(flags, target, io.now(), readResolvConf), keyPairs: new KeyPairCache() };
}

/** `nginx -V` of the binary to render for; one that cannot be run is an environment problem (exit 2). */
async function detectNginx(binary: string): Promise<{ version: string; streamModulePath?: string }> {
  try {
    await access(binary, constants.X_OK).catch((error: NodeJS.ErrnoException) => {
      if (binary.includes('/') || error.code !== 'ENOENT') throw error;
    });
    return await nginxBuild(binary);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || /not found/.test((error as Error).message)) {
      throw new EnvironmentError(`nginx binary "${binary}" not found; install nginx or set --nginx-bin / NGINX_BIN`);
    }
    throw new EnvironmentError(`cannot run the nginx binary "${binary}": ${reason(error)}`);
  }
}
