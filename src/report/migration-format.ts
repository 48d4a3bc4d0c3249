import type { MigrationReport, UsageStatus } from './migration.js';
import { formatFieldPath } from '../model/diagnostics.js';
import { markdownCode, markdownText } from './escape.js';
import { printable } from '../model/printable.js';

/**
 * The migration report for a terminal (text), a pull request (markdown) or a program (json). Notes come
 * from the catalog; names and messages from the input are printed with control characters escaped.
 */

const words: Record<UsageStatus, string> = {
  supported: 'supported',
  differs: 'differs',
  ignored: 'IGNORED',
  refused: 'REFUSED',
  unknown: 'UNKNOWN',
};

function headline(report: MigrationReport): string {
  const leftOut = report.ingressesWithErrors.filter((i) => i.outcome === 'left-out').length;
  const degraded = report.ingressesWithErrors.length - leftOut;
  return `${report.ingresses} Ingress(es) of our class: ${leftOut} would be left out, ${degraded} served with errors, ${report.ingresses - leftOut - degraded} served as written`;
}

export function formatAuditText(report: MigrationReport): string {
  const lines = [`ingress2nginx audit: ${headline(report)}`, ''];
  lines.push(`Annotations (${report.annotations.length} in use, prefix nginx.ingress.kubernetes.io/):`);
  const width = Math.max(10, ...report.annotations.map((a) => a.name.length));
  for (const usage of report.annotations) {
    lines.push(`  ${printable(usage.name).padEnd(width)}  ${String(usage.ingresses).padStart(4)} Ingress(es)  ${words[usage.status]}`);
    lines.push(`      ${usage.note}`);
    lines.push(`      e.g. ${usage.examples.map(printable).join(', ')}`);
  }
  if (report.annotations.length === 0) lines.push('  none');
  lines.push('');
  if (report.configMap !== undefined) {
    lines.push(`ConfigMap ${report.configMap} (${report.configMapKeys.length} key(s)):`);
    for (const key of report.configMapKeys) lines.push(`  ${printable(key.key)}  ${words[key.status]}${key.note === '' ? '' : `: ${key.note}`}`);
    lines.push('');
  }
  if (report.snippets.length > 0) {
    lines.push('Snippets in use (raw nginx text; what replaces each directive):');
    for (const usage of report.snippets) {
      lines.push(`  ${printable(usage.resource)} ${printable(usage.snippet)}:`);
      for (const directive of usage.directives) {
        const replacement = directive.replacement === undefined ? 'no annotation replaces it' : `${directive.replacement} (ingress2nginx: ${directive.replacementStatus})`;
        lines.push(`      ${printable(directive.text)}  ->  ${printable(replacement)}`);
      }
    }
    lines.push('');
  }
  if (report.ingressesWithErrors.length > 0) {
    lines.push('Ingresses not served as written (fix these before you switch):');
    for (const ingress of report.ingressesWithErrors) {
      lines.push(`  ${printable(`${ingress.namespace}/${ingress.name}`)}: ${ingress.outcome === 'left-out' ? 'left out' : 'served with errors'}`);
      for (const error of ingress.errors) {
        const where = error.file ? `${error.file}${error.line ? `:${error.line}` : ''} ` : '';
        lines.push(`      ${printable(`${where}[${error.code}]${error.field ? ` ${error.field}` : ''}: ${error.message}`)}`);
      }
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

export function formatAuditMarkdown(report: MigrationReport): string {
  const lines = ['# ingress2nginx migration report', '', headline(report), '', '## Annotations', ''];
  if (report.annotations.length === 0) lines.push('None in use.');
  else {
    lines.push('| annotation | Ingresses | status | what ingress2nginx does |', '|---|---:|---|---|');
    for (const usage of report.annotations) lines.push(`| ${markdownCode(usage.name)} | ${usage.ingresses} | ${usage.status} | ${markdownText(usage.note)} |`);
  }
  if (report.configMap !== undefined) {
    lines.push('', `## ConfigMap ${markdownCode(report.configMap)}`, '');
    if (report.configMapKeys.length === 0) lines.push('No keys.');
    else {
      lines.push('| key | status | note |', '|---|---|---|');
      for (const key of report.configMapKeys) lines.push(`| ${markdownCode(key.key)} | ${key.status} | ${markdownText(key.note)} |`);
    }
  }
  if (report.snippets.length > 0) {
    lines.push('', '## Snippets in use', '', '| resource | snippet | directive | replaced by |', '|---|---|---|---|');
    for (const usage of report.snippets) {
      for (const directive of usage.directives) {
        const replacement = directive.replacement === undefined ? 'nothing' : `${markdownCode(directive.replacement)} (ingress2nginx: ${directive.replacementStatus})`;
        lines.push(`| ${markdownText(usage.resource)} | ${markdownCode(usage.snippet)} | ${markdownCode(directive.text)} | ${replacement} |`);
      }
    }
  }
  if (report.ingressesWithErrors.length > 0) {
    lines.push('', '## Ingresses not served as written', '', '| Ingress | outcome | errors |', '|---|---|---|');
    for (const ingress of report.ingressesWithErrors) {
      const errors = ingress.errors.map((e) => `${markdownCode(e.code)}${e.field ? ` ${markdownCode(e.field)}` : ''}: ${markdownText(e.message)}`).join('<br>');
      lines.push(`| ${markdownCode(`${ingress.namespace}/${ingress.name}`)} | ${ingress.outcome} | ${errors} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function formatAuditJson(report: MigrationReport): string {
  const data = {
    ...report,
    ingressesWithErrors: report.ingressesWithErrors.map((ingress) => ({
      ...ingress,
      errors: ingress.errors.map((e) => ({
        code: e.code,
        file: e.file ?? null,
        line: e.line ?? null,
        field: e.field ?? (e.path ? formatFieldPath(e.path) : null),
        message: e.message,
      })),
    })),
  };
  return `${JSON.stringify(data, null, 2)}\n`;
}
