import type { Command } from 'commander';
import { build } from '../build/build.js';
import { formatRoutesJson, formatRoutesMarkdown, formatRoutesText, routesTextWidth } from '../report/routes-format.js';
import { routeTable } from '../report/routes.js';
import { formatSarif } from '../report/sarif.js';
import { diagnosticsOf, humanDiagnostics, outcome, readManifests, translateOptionsOf, withCommonOptions, type CliIo } from './common.js';
import type { CommonFlags } from './options.js';

interface RoutesFlags extends CommonFlags {
  readonly wide: boolean;
}

/**
 * `routes`: the route table on stdout (text, json or markdown), or with sarif the diagnostics there;
 * diagnostics for people on stderr. Exit 0 clean, 1 input errors, 2 failure.
 */
export function routesCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  withCommonOptions(
    program.command('routes').description('print the route table: one row per port, host and path, with backends, TLS and who claims it'),
    'route table as text, json or markdown on stdout; sarif: the diagnostics',
  )
    .option('--wide', `text: every column, uncut (default: the main ones, cut to ${routesTextWidth} columns)`, false)
    .action(async (flags: RoutesFlags) => {
      const source = await readManifests(flags, io);
      const result = build(source.snapshot, await translateOptionsOf(flags, io, false));
      const diagnostics = await diagnosticsOf(source, result);
      if (flags.format === 'sarif') {
        io.stdout(formatSarif(diagnostics));
      } else {
        humanDiagnostics(diagnostics, flags, io);
        const table = routeTable(result);
        io.stdout(
          flags.format === 'json' ? formatRoutesJson(table) : flags.format === 'markdown' ? formatRoutesMarkdown(table) : formatRoutesText(table, { wide: flags.wide }),
        );
      }
      setExitCode(outcome(diagnostics, flags.strict));
    });
}
