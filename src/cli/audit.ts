import type { Command } from 'commander';
import { build } from '../render/build.js';
import { formatAuditJson, formatAuditMarkdown, formatAuditText } from '../report/migration-format.js';
import { migrationReport } from '../report/migration.js';
import { diagnosticsOf, exitCodes, readSources, translateOptionsOf, withCommonOptions, type CliIo } from './common.js';
import type { CommonFlags } from './options.js';

/**
 * `audit`: the migration report. Exit 1 when an Ingress would not be served as written, or with
 * `--strict` when an annotation in use is ignored or unknown; 0 otherwise.
 */
export function auditCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  withCommonOptions(
    program
      .command('audit')
      .description('migration report: the ingress-nginx annotations and ConfigMap keys in use, what ingress2nginx does with each, and the Ingresses it would not serve as written'),
    ['text', 'json', 'markdown'],
    'report format',
  ).action(async (flags: CommonFlags) => {
    const source = await readSources(flags.filename, io);
    const result = build(source.snapshot, await translateOptionsOf(flags, io, false));
    const report = migrationReport(source.snapshot, { ...result, diagnostics: await diagnosticsOf(source, result) }, flags.configmap);
    io.stdout(flags.format === 'json' ? formatAuditJson(report) : flags.format === 'markdown' ? formatAuditMarkdown(report) : formatAuditText(report));
    const blocked = report.ingressesWithErrors.length > 0;
    const lossy = report.annotations.some((usage) => usage.status === 'ignored' || usage.status === 'unknown');
    setExitCode(blocked || (flags.strict && lossy) ? exitCodes.inputErrors : exitCodes.clean);
  });
}
