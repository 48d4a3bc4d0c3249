import { constants, readFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { nginxBinary, type NginxCheck } from '../apply/check.js';
import { EnvironmentError, reason } from '../apply/environment.js';
import { hasErrors, type Diagnostic } from '../model/diagnostics.js';
import type { BuildResult } from '../render/build.js';
import { readInputs, type FileSourceResult } from '../sources/files.js';
import { refinePositions } from '../sources/positions.js';
import { nginxBuild } from '../sidecar/nginx.js';
import type { TranslateOptions } from '../translate/options.js';
import {
  defaults,
  parseAbsoluteFile,
  parseAccessLog,
  parseClassName,
  parseDomain,
  parseDomainList,
  parseNamespacedName,
  parseNow,
  parsePort,
  parseResolver,
  parseRunDir,
  parseStreamModule,
  parseVersion,
  nginxTarget,
  toTranslateOptions,
  type CommonFlags,
  type OutputFormat,
} from './options.js';
import { formatSarif } from '../report/sarif.js';
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

/**
 * Flags of the commands that read manifests from files. `formats` are the choices of `--format`: what
 * it formats (diagnostics, routes, a diff) is the command's to say. A command that can also read a
 * cluster makes `-f` optional and checks the choice itself.
 */
export function withCommonOptions(
  command: Command,
  formats: readonly OutputFormat[] = ['text', 'json'],
  formatDescription = 'diagnostics format',
  filenames: 'required' | 'optional' = 'required',
): Command {
  const filenameFlags = '-f, --filename <path>';
  const filenameDescription = 'manifest file, directory (recursive) or - for stdin; repeatable';
  return withTranslateOptions(
    (filenames === 'required'
      ? command.requiredOption(filenameFlags, filenameDescription, collect)
      : command.option(filenameFlags, filenameDescription, collect))
      .addOption(new Option('--format <format>', formatDescription).choices([...formats]).default('text'))
      .option('--strict', 'warnings fail too (exit 1)', false),
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
    .option('--access-log <path>', 'access_log target, e.g. /dev/stdout, or "off"', parseAccessLog, 'off')
    .option('--certificates-per-handshake', 'one SSL context for all terminated hosts, certificates read by SNI per handshake (fast reloads; nginx workers must be able to read the key files)', false);
}

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function readResolvConf(): string {
  try {
    return readFileSync('/etc/resolv.conf', 'utf8');
  } catch {
    return '';
  }
}

export function readSources(filenames: readonly string[], io: CliIo): Promise<FileSourceResult> {
  return readInputs([...filenames], { stdin: io.stdin });
}

/** The sources' and the build's diagnostics, each at the line and column of its field. */
export function diagnosticsOf(source: FileSourceResult, result: BuildResult): Promise<Diagnostic[]> {
  return refinePositions([...source.diagnostics, ...result.diagnostics], source.snapshot, source.readText);
}

/** Diagnostics on stderr as text or JSON; SARIF goes to stdout, alone, to be saved as a file. */
export function report(diagnostics: readonly Diagnostic[], result: BuildResult, flags: CommonFlags, io: CliIo, nginx?: NginxCheck): void {
  if (flags.format === 'sarif') {
    io.stdout(formatSarif(diagnostics));
    if (nginx && !nginx.ok) io.stderr(`nginx -t failed:\n${nginx.output}\n`);
    return;
  }
  if (flags.format === 'json') {
    io.stderr(formatJson(diagnostics, result.statuses, nginx));
    return;
  }
  if (diagnostics.length > 0) io.stderr(formatTextReport(diagnostics));
  if (nginx && !nginx.ok) io.stderr(`nginx -t failed:\n${nginx.output}\n`);
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
  return toTranslateOptions(flags, target, io.now(), readResolvConf);
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
