import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { createTwoFilesPatch } from 'diff';
import { listFiles, managedFolders } from '../apply/write.js';
import { mainConfigName } from '../model/nginx.js';
import { build, type BuildResult } from '../render/build.js';
import { formatDiffJson, formatDiffMarkdown, formatDiffText } from '../report/diff-format.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { hasChanges, routeDiff, type DiffSide } from '../report/diff.js';
import { reviewSide, type RiskyChange } from '../report/risky.js';
import { routeTable } from '../report/routes.js';
import { formatSarif } from '../report/sarif.js';
import type { FileSourceResult } from '../sources/files.js';
import { refinePositions } from '../sources/positions.js';
import type { TranslateOptions } from '../translate/options.js';
import { collect, diagnosticsOf, exitCodes, outcome, readSources, translateOptionsOf, report, withCommonOptions, type CliIo } from './common.js';
import { UsageError, type CommonFlags } from './options.js';
import { formatSummary } from './reporters.js';

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
    ['text', 'json', 'markdown', 'sarif'],
    'output format (--against: text or json diagnostics)',
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
      if (flags.format !== 'text' && flags.format !== 'json') throw new UsageError('with --against, --format is text or json');
      const source = await readSources(flags.filename, io);
      const result = build(source.snapshot, options);
      const diagnostics = await diagnosticsOf(source, result);
      report(diagnostics, result, flags, io);
      const drift = await driftAgainst(flags.against!, result);
      if (drift.length > 0) io.stdout(drift.join(''));
      setExitCode(drift.length > 0 ? exitCodes.inputErrors : outcome(diagnostics, flags.strict));
    });
}

async function routeDiffCommand(flags: DiffFlags, baseManifests: readonly string[], options: TranslateOptions, io: CliIo): Promise<number> {
  if (flags.filename.includes('-') && baseManifests.includes('-')) throw new UsageError('only one of -f and --base-manifests can read stdin');
  const base = (await diffSide(baseManifests, options, io)).side;
  const { side: next, source } = await diffSide(flags.filename, options, io);
  const compared = routeDiff(base, next, options.now);
  const diff = { ...compared, risky: await refineRiskyPositions(compared.risky, source) };
  if (next.diagnostics.length > 0) io.stderr(`new manifests: ${formatSummary(next.diagnostics)}`);
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
async function diffSide(filenames: readonly string[], options: TranslateOptions, io: CliIo): Promise<{ side: DiffSide; source: FileSourceResult }> {
  const source = await readSources(filenames, io);
  const result = build(source.snapshot, options);
  return { side: { ...reviewSide(result, routeTable(result), source.snapshot), diagnostics: await diagnosticsOf(source, result) }, source };
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
