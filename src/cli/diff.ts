import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { createTwoFilesPatch } from 'diff';
import { listFiles, managedFolders } from '../apply/write.js';
import { mainConfigName } from '../model/nginx.js';
import { build, type BuildResult } from '../build/build.js';
import { formatDiffJson, formatDiffMarkdown, formatDiffText } from '../report/diff-format.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { hasChanges, routeDiff, type DiffSide } from '../report/diff.js';
import { reviewSide, type RiskyChange } from '../report/risky.js';
import { routeTable } from '../report/routes.js';
import { markdownCode } from '../report/escape.js';
import { printableLines } from '../model/printable.js';
import { formatSarif } from '../report/sarif.js';
import type { FileSourceResult } from '../sources/files.js';
import { refinePositions } from '../sources/positions.js';
import type { TranslateOptions } from '../translate/options.js';
import {
  collect,
  diagnosticsOf,
  exitCodes,
  outcome,
  progress,
  readManifests,
  readSources,
  reportDiagnostics,
  translateOptionsOf,
  withCommonOptions,
  type CliIo,
} from './common.js';
import { UsageError, type CommonFlags } from './options.js';
import { formatJson, formatSummary } from './reporters.js';

interface DiffFlags extends CommonFlags {
  readonly against?: string;
  readonly baseManifests?: string[];
}

/**
 * `diff`: with `--base-manifests`, the route diff of the base manifests against the new ones (risky
 * changes first); with `--against DIR`, the byte drift of a rendered folder. Exit 0 no change, 1
 * changes, 2 failure.
 */
export function diffCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  withCommonOptions(
    program
      .command('diff')
      .description('compare routes with --base-manifests (exit 1 on changes), or the rendered bytes with --against DIR (exit 1 on drift)'),
    'the diff on stdout as text, json or markdown; sarif: diagnostics and risky changes (--against: the drift with the diagnostics)',
  )
    .option('--base-manifests <path>', 'manifests of the base (e.g. the target branch): file, directory or -; repeatable', collect)
    .option('--against <dir>', 'a directory written by render: print the byte drift')
    .action(async (flags: DiffFlags) => {
      const options = await translateOptionsOf(flags, io, false);
      if ((flags.against === undefined) === (flags.baseManifests === undefined)) {
        throw new UsageError('give either --base-manifests (route diff) or --against DIR (byte drift)');
      }
      if (flags.baseManifests !== undefined) {
        setExitCode(await routeDiffCommand(flags, flags.baseManifests, options, io));
        return;
      }
      const source = await readManifests(flags, io);
      const result = build(source.snapshot, options);
      const diagnostics = await diagnosticsOf(source, result);
      const drift = await driftAgainst(flags.against!, result);
      reportDrift(drift, diagnostics, result, flags, io);
      setExitCode(drift.length > 0 ? exitCodes.inputErrors : outcome(diagnostics, flags.strict));
    });
}

/**
 * `--against`: the drift (a unified diff of nginx.conf, key files named) with the diagnostics. Text:
 * the drift on stdout, diagnostics on stderr; json: one document with both; markdown: the diagnostics
 * and the drift in a fenced block; sarif: the diagnostics on stdout, the drift on stderr.
 */
function reportDrift(drift: readonly string[], diagnostics: readonly Diagnostic[], result: BuildResult, flags: DiffFlags, io: CliIo): void {
  const text = drift.join('');
  if (flags.format === 'json') {
    io.stdout(formatJson(diagnostics, result.statuses, undefined, { drift: text }));
    return;
  }
  reportDiagnostics(diagnostics, flags, io, { statuses: result.statuses });
  if (flags.format === 'markdown') io.stdout(`\n### Drift against ${markdownCode(flags.against!)}\n\n${text === '' ? 'None.\n' : fenced(text, 'diff')}`);
  else if (flags.format === 'sarif') io.stderr(printableLines(text));
  else io.stdout(printableLines(text));
}

async function routeDiffCommand(flags: DiffFlags, baseManifests: readonly string[], options: TranslateOptions, io: CliIo): Promise<number> {
  if (flags.filename.includes('-') && baseManifests.includes('-')) throw new UsageError('only one of -f and --base-manifests can read stdin');
  const base = (await diffSide(readSources(baseManifests, io), options)).side;
  const { side: next, source } = await diffSide(readManifests(flags, io), options);
  const compared = routeDiff(base, next, options.now);
  const diff = { ...compared, risky: await refineRiskyPositions(compared.risky, source) };
  if (next.diagnostics.length > 0) progress(flags, io, `new manifests: ${formatSummary(next.diagnostics).trimEnd()}`);
  const formatted =
    flags.format === 'json'
      ? formatDiffJson(diff)
      : flags.format === 'markdown'
        ? formatDiffMarkdown(diff)
        : flags.format === 'sarif'
          ? formatSarif(next.diagnostics, diff.risky)
          : formatDiffText(diff);
  io.stdout(formatted);
  return hasChanges(diff) ? exitCodes.inputErrors : exitCodes.clean;
}

/** Builds one side and keeps only what the diff needs, so that the base's build is freed before the new one. */
async function diffSide(reading: Promise<FileSourceResult>, options: TranslateOptions): Promise<{ side: DiffSide; source: FileSourceResult }> {
  const source = await reading;
  const result = build(source.snapshot, options);
  return { side: { ...reviewSide(result, routeTable(result), source.snapshot), diagnostics: await diagnosticsOf(source, result) }, source };
}

/** A fenced code block longer than any run of backticks in `text`. */
function fenced(text: string, language: string): string {
  const fence = '`'.repeat(Math.max(3, ...(text.match(/`+/g) ?? []).map((run) => run.length + 1)));
  return `${fence}${language}\n${printableLines(text)}${text.endsWith('\n') ? '' : '\n'}${fence}\n`;
}

/** Risky changes point at the field's line and column, found the way diagnostics' are. */
async function refineRiskyPositions(risky: readonly RiskyChange[], source: FileSourceResult): Promise<RiskyChange[]> {
  const asDiagnostics: Diagnostic[] = risky.map((r) => ({
    severity: 'warning',
    code: r.rule,
    ...(r.resource && { resource: r.resource.resource }),
    ...(r.resource?.file !== undefined && { file: r.resource.file }),
    ...(r.resource?.line !== undefined && { line: r.resource.line }),
    ...(r.resource?.path && { path: r.resource.path }),
    message: r.message,
  }));
  const refined = await refinePositions(asDiagnostics, source.snapshot, source.readText);
  return risky.map((r, i) => {
    const position = refined[i];
    if (!r.resource || position?.line === undefined) return r;
    return { ...r, resource: { ...r.resource, line: position.line, ...(position.column !== undefined && { column: position.column }) } };
  });
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
