import type { Command } from 'commander';
import { build } from '../render/build.js';
import { formatRoutesJson, formatRoutesMarkdown, formatRoutesText } from '../report/routes-format.js';
import { routeTable } from '../report/routes.js';
import { diagnosticsOf, outcome, readSources, translateOptionsOf, withCommonOptions, type CliIo } from './common.js';
import type { CommonFlags } from './options.js';
import { formatTextReport } from './reporters.js';

/** `routes`: the route table on stdout, diagnostics on stderr; exit 0 clean, 1 input errors, 2 failure. */
export function routesCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  withCommonOptions(
    program.command('routes').description('print the route table: one row per port, host and path, with backends, TLS and who claims it'),
    ['text', 'json', 'markdown'],
    'route table format',
  ).action(async (flags: CommonFlags) => {
    const source = await readSources(flags.filename, io);
    const result = build(source.snapshot, await translateOptionsOf(flags, io, false));
    const diagnostics = await diagnosticsOf(source, result);
    if (diagnostics.length > 0) io.stderr(formatTextReport(diagnostics));
    const table = routeTable(result);
    io.stdout(flags.format === 'json' ? formatRoutesJson(table) : flags.format === 'markdown' ? formatRoutesMarkdown(table) : formatRoutesText(table));
    setExitCode(outcome(diagnostics, flags.strict));
  });
}
