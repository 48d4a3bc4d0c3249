import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { environment, EnvironmentError } from '../apply/environment.js';
import { build } from '../build/build.js';
import { routeDiff, type DiffSide } from '../report/diff.js';
import { reviewSide } from '../report/risky.js';
import { reviewPage } from '../report/review-page.js';
import { routeTable } from '../report/routes.js';
import type { TranslateOptions } from '../translate/options.js';
import { collect, diagnosticsOf, outcome, progress, readManifests, readSources, reportDiagnostics, translateOptionsOf, withCommonOptions, type CliIo } from './common.js';
import { UsageError, type CommonFlags } from './options.js';

interface ReviewFlags extends CommonFlags {
  readonly output: string;
  readonly baseManifests?: string[];
}

/**
 * `review`: one self-contained HTML page for a CI artifact. Diagnostics as for `validate`; exit 0
 * clean, 1 input errors, 2 failure (the gate on changes is `diff`).
 */
export function reviewCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  withCommonOptions(
    program.command('review').description('write a self-contained HTML review page: routes, data plane, diagnostics, certificates and, with a base, the diff'),
    'diagnostics: text on stderr, or json, sarif or markdown on stdout',
  )
    .requiredOption('-o, --output <file>', 'HTML file to write')
    .option('--base-manifests <path>', 'manifests of the base (e.g. the target branch) to show the diff against; repeatable', collect)
    .action(async (flags: ReviewFlags) => {
      const options = await translateOptionsOf(flags, io, false);
      if (flags.baseManifests?.includes('-') && flags.filename.includes('-')) throw new UsageError('only one of -f and --base-manifests can read stdin');
      await checkPageTarget(flags.output);
      // The base first, so that only its route table and a few objects are alive while the new side builds.
      const base = flags.baseManifests ? await baseSide(flags.baseManifests, options, io) : undefined;
      const source = await readManifests(flags, io);
      const result = build(source.snapshot, options);
      const next: DiffSide = { ...reviewSide(result, routeTable(result), source.snapshot), diagnostics: await diagnosticsOf(source, result) };
      const diff = base ? routeDiff(base, next, options.now) : undefined;
      const page = reviewPage({
        table: next.table,
        model: result.model,
        diagnostics: next.diagnostics,
        certificates: result.certificates,
        now: options.now,
        ...(diff && { diff }),
      });
      await writePage(flags.output, page);
      reportDiagnostics(next.diagnostics, flags, io, { statuses: result.statuses });
      progress(
        flags,
        io,
        `wrote ${flags.output}: ${next.table.rows.length} route(s), ${next.diagnostics.length} diagnostic(s)` +
          `${diff ? `, ${diff.risky.length} risky change(s)` : ''}, ${Buffer.byteLength(page)} bytes`,
      );
      setExitCode(outcome(next.diagnostics, flags.strict));
    });
}

/** Before any work: the page goes to a file in a folder that exists (one line, exit 2, otherwise). */
async function checkPageTarget(file: string): Promise<void> {
  const existing = await stat(file).catch(() => undefined);
  if (existing?.isDirectory()) throw new EnvironmentError(`cannot write the review page ${file}: it is a folder; give a file name, such as ${file.replace(/\/+$/, '')}/review.html`);
  const folder = dirname(file);
  const parent = await stat(folder).catch(() => undefined);
  if (!parent) throw new EnvironmentError(`cannot write the review page ${file}: the folder ${folder} does not exist`);
  if (!parent.isDirectory()) throw new EnvironmentError(`cannot write the review page ${file}: ${folder} is not a folder`);
}

/** Written beside its final name, then renamed: a CI artifact is never a half-written page. */
async function writePage(file: string, page: string): Promise<void> {
  const temporary = `${file}.tmp-${process.pid}`;
  try {
    await environment(`cannot write the review page ${file}`, async () => {
      await writeFile(temporary, page, { mode: 0o644 });
      await rename(temporary, file);
    });
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

async function baseSide(filenames: readonly string[], options: TranslateOptions, io: CliIo): Promise<DiffSide> {
  const source = await readSources(filenames, io);
  const result = build(source.snapshot, options);
  return { ...reviewSide(result, routeTable(result), source.snapshot), diagnostics: await diagnosticsOf(source, result) };
}
