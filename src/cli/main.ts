import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { createTwoFilesPatch } from 'diff';
import { checkConfig, nginxBinary, type NginxCheck } from '../apply/check.js';
import { EnvironmentError } from '../apply/environment.js';
import { buildChecked } from '../apply/quarantine.js';
import { listFiles, managedFolders, OutputFolder, type Staged } from '../apply/write.js';
import { hasErrors, type Diagnostic } from '../model/diagnostics.js';
import { mainConfigName } from '../model/nginx.js';
import { build, type BuildResult } from '../render/build.js';
import { InputError, readInputs, type FileSourceResult } from '../sources/files.js';
import { refinePositions } from '../sources/positions.js';
import type { Snapshot } from '../sources/snapshot.js';
import type { TranslateOptions } from '../translate/options.js';
import {
  defaults,
  parseAbsoluteFile,
  parseAccessLog,
  parseDomain,
  parseClassName,
  parseNamespacedName,
  parseNow,
  parsePort,
  parseRunDir,
  parseStreamModule,
  parseVersion,
  toTranslateOptions,
  UsageError,
  type CommonFlags,
} from './options.js';
import { formatJson, formatSummary, formatText } from './reporters.js';

export interface CliIo {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly now: () => Date;
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
      const options = toTranslateOptions(flags, io.now());
      const source = await readSources(flags, io);
      const folder = await OutputFolder.open(flags.output);
      try {
        const rendered = flags.check
          ? await renderChecked(folder, source.snapshot, options, nginxBinary(flags.nginxBin))
          : await renderUnchecked(folder, source.snapshot, options);
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
      const options = toTranslateOptions(flags, io.now());
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
      const options = toTranslateOptions(flags, io.now());
      const source = await readSources(flags, io);
      const result = build(source.snapshot, options);
      const diagnostics = await diagnosticsOf(source, result);
      report(diagnostics, result, flags, io);
      const drift = await driftAgainst(flags.against, result);
      if (drift.length > 0) io.stdout(drift.join(''));
      exitCode = drift.length > 0 ? exitCodes.inputErrors : outcome(diagnostics, flags.strict);
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
      error instanceof EnvironmentError
    ) {
      io.stderr(`ingress2nginx: ${error.message}\n`);
      return exitCodes.failure;
    }
    io.stderr(`ingress2nginx: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return exitCodes.failure;
  }
}

function withCommonOptions(command: Command): Command {
  return command
    .requiredOption('-f, --filename <path>', 'manifest file, directory (recursive) or - for stdin; repeatable', collect)
    .addOption(new Option('--format <format>', 'diagnostics format').choices(['text', 'json']).default('text'))
    .option('--strict', 'warnings fail too (exit 1)', false)
    .option('--ingress-class <name>', 'IngressClass name to serve', parseClassName, defaults.ingressClass)
    .option('--gateway-class <name>', 'GatewayClass name to serve', parseClassName, defaults.gatewayClass)
    .option('--watch-ingress-without-class', 'also serve Ingresses that name no class', false)
    .option('--configmap <namespace/name>', 'controller ConfigMap (ingress-nginx keys)', parseNamespacedName)
    .option('--default-certificate <namespace/name>', 'TLS Secret for the default server', parseNamespacedName)
    .option('--allow-cross-namespace-secrets', 'let proxy-ssl-secret name a Secret in another namespace', false)
    .option('--cluster-domain <domain>', 'cluster DNS domain for Services not in the input', parseDomain, defaults.clusterDomain)
    .option('--http-port <port>', 'plain HTTP port', parsePort, defaults.httpPort)
    .option('--https-port <port>', 'TLS port, split by SNI', parsePort, defaults.httpsPort)
    .option('--run-dir <dir>', 'absolute directory for pid, unix sockets and temp files', parseRunDir, defaults.runDir)
    .option('--nginx-version <version>', 'nginx version to render for', parseVersion, defaults.nginxVersion)
    .option('--stream-module <path>', 'stream module to load_module, or "none" when built in', parseStreamModule, defaults.streamModule)
    .option('--system-ca-bundle <path>', 'CA bundle for BackendTLSPolicy wellKnownCACertificates: System', parseAbsoluteFile, defaults.systemCaBundle)
    .option('--access-log <path>', 'access_log target, e.g. /dev/stdout, or "off"', parseAccessLog, 'off')
    .option('--now <time>', 'check certificate validity at this time instead of now', parseNow);
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function readSources(flags: CommonFlags, io: CliIo): Promise<FileSourceResult> {
  return readInputs(flags.filename, { stdin: io.stdin });
}

interface Rendered {
  readonly result: BuildResult;
  /** The files to commit; none when nginx rejected the config. */
  readonly staged?: Staged;
  readonly nginx?: NginxCheck;
  /** A config nginx rejected before quarantine made it pass, to keep as `.i2n-rejected` after the commit. */
  readonly rejected?: Staged;
}

async function renderUnchecked(folder: OutputFolder, snapshot: Snapshot, options: TranslateOptions): Promise<Rendered> {
  const result = build(snapshot, options);
  return { result, staged: await folder.stage(result.files) };
}

/**
 * `buildChecked` with every candidate build staged in the output folder and checked there. nginx names
 * the staging folder in its messages; they are rewritten to `.i2n-rejected`, where the config it rejected
 * is kept, so that they point at a file that is still there and read the same on every run. On failure
 * the last build is kept there and nothing is committed.
 */
async function renderChecked(folder: OutputFolder, snapshot: Snapshot, options: TranslateOptions, nginxBin: string): Promise<Rendered> {
  // The staging folder of the build checked last, and of the first one nginx rejected (if any).
  const stagings = new Map<BuildResult, Staged>();
  let firstRejected: BuildResult | undefined;
  const { result, check } = await buildChecked(snapshot, options, async (candidate) => {
    for (const [built, staged] of stagings) {
      if (built === firstRejected) continue;
      await folder.discard(staged);
      stagings.delete(built);
    }
    const staged = await folder.stage(candidate.files);
    stagings.set(candidate, staged);
    const nginx = await checkConfig(staged.dir, candidate.model.runDir, nginxBin);
    if (!nginx.ok) firstRejected ??= candidate;
    return { ok: nginx.ok, output: nginx.output.split(resolve(staged.dir)).join(folder.rejectedDir) };
  });
  const staged = stagings.get(result) ?? (await folder.stage(result.files));
  if (!check.ok) {
    await folder.keepRejected(staged);
    return { result, nginx: check };
  }
  const rejected = firstRejected && stagings.get(firstRejected);
  return { result, staged, nginx: check, ...(rejected && { rejected }) };
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
