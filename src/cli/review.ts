import { rename, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { build } from '../render/build.js';
import { routeDiff, type DiffSide } from '../report/diff.js';
import { reviewSide } from '../report/risky.js';
import { reviewPage } from '../report/review-page.js';
import { routeTable } from '../report/routes.js';
import type { TranslateOptions } from '../translate/options.js';
import { collect, diagnosticsOf, outcome, readSources, translateOptionsOf, withCommonOptions, type CliIo } from './common.js';
import { UsageError, type CommonFlags } from './options.js';
import { formatTextReport } from './reporters.js';

interface ReviewFlags extends CommonFlags {
  readonly output: string;
  readonly baseManifests?: string[];
}

/**
 * `review`: one self-contained HTML page for a CI artifact. Diagnostics on stderr; exit 0 clean,
 * 1 input errors, 2 failure (the gate on changes is `diff`).
 */
export function reviewCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  withCommonOptions(
    program.command('review').description('write a self-contained HTML review page: routes, data plane, diagnostics, certificates and, with a base, the diff'),
    ['text', 'json'],
  )
    .requiredOption('-o, --output <file>', 'HTML file to write')
    .option('--base-manifests <path>', 'manifests of the base (e.g. the target branch) to show the diff against; repeatable', collect)
    .action(async (flags: ReviewFlags) => {
      const options = await translateOptionsOf(flags, io, false);
      if (flags.baseManifests?.includes('-') && flags.filename.includes('-')) throw new UsageError('only one of -f and --base-manifests can read stdin');
      // The base first, so that only its route table and a few objects are alive while the new side builds.
      const base = flags.baseManifests ? await baseSide(flags.baseManifests, options, io) : undefined;
      const source = await readSources(flags.filename, io);
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
      // Written beside its final name, then renamed: a CI artifact is never a half-written page.
      const temporary = `${flags.output}.tmp-${process.pid}`;
      await writeFile(temporary, page, { mode: 0o644 });
      await rename(temporary, flags.output);
      if (next.diagnostics.length > 0) io.stderr(formatTextReport(next.diagnostics));
      io.stdout(
        `wrote ${flags.output}: ${next.table.rows.length} route(s), ${next.diagnostics.length} diagnostic(s)` +
          `${diff ? `, ${diff.risky.length} risky change(s)` : ''}, ${Buffer.byteLength(page)} bytes\n`,
      );
      setExitCode(outcome(next.diagnostics, flags.strict));
    });
}

async function baseSide(filenames: readonly string[], options: TranslateOptions, io: CliIo): Promise<DiffSide> {
  const source = await readSources(filenames, io);
  const result = build(source.snapshot, options);
  return { ...reviewSide(result, routeTable(result), source.snapshot), diagnostics: await diagnosticsOf(source, result) };
}
