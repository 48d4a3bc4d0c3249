import { isAbsolute } from 'node:path';
import type { Diagnostic, ResourceRef, Severity } from '../model/diagnostics.js';
import { compareStrings } from '../model/order.js';
import { diagnosticHelp } from './diagnostic-help.js';
import { riskyRules, type RiskyChange } from './risky.js';
import { refName } from './routes.js';

/**
 * SARIF 2.1.0: diagnostics (rule id = diagnostic code) and risky changes (rule id `risky-change/<rule>`)
 * at the file, line and column of the manifest, so code scanning annotates the line in a pull request.
 * No time stamps or absolute paths of this machine: the same input gives the same bytes.
 */

const sarifLevels: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', info: 'note' };

interface SarifFinding {
  readonly ruleId: string;
  readonly level: 'error' | 'warning' | 'note';
  readonly message: string;
  readonly help: string;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  readonly resource?: ResourceRef;
}

function riskyRuleId(rule: RiskyChange['rule']): string {
  return `risky-change/${rule}`;
}

export function formatSarif(diagnostics: readonly Diagnostic[], risky: readonly RiskyChange[] = []): string {
  const findings: SarifFinding[] = [
    ...diagnostics.map((d) => ({
      ruleId: d.code,
      level: sarifLevels[d.severity],
      message: d.field ? `${d.field}: ${d.message}` : d.message,
      help: diagnosticHelp(d.code),
      ...(d.file !== undefined && { file: d.file }),
      ...(d.line !== undefined && { line: d.line }),
      ...(d.column !== undefined && { column: d.column }),
      ...(d.resource && { resource: d.resource }),
    })),
    ...risky.map((r) => ({
      ruleId: riskyRuleId(r.rule),
      level: 'warning' as const,
      message: r.message,
      help: riskyRules[r.rule],
      ...(r.resource?.file !== undefined && { file: r.resource.file }),
      ...(r.resource?.line !== undefined && { line: r.resource.line }),
      ...(r.resource?.column !== undefined && { column: r.resource.column }),
      ...(r.resource && { resource: r.resource.resource }),
    })),
  ];
  const rules = [...new Map(findings.map((f) => [f.ruleId, f])).values()].sort((a, b) => compareStrings(a.ruleId, b.ruleId));
  const ruleIndex = new Map(rules.map((rule, index) => [rule.ruleId, index]));
  const log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'ingress2nginx',
            rules: rules.map((rule) => ({
              id: rule.ruleId,
              shortDescription: { text: firstSentence(rule.help) },
              help: { text: rule.help },
              defaultConfiguration: { level: rule.level },
            })),
          },
        },
        columnKind: 'utf16CodeUnits',
        results: findings.map((f) => ({
          ruleId: f.ruleId,
          ruleIndex: ruleIndex.get(f.ruleId),
          level: f.level,
          message: { text: f.message },
          ...(location(f) && { locations: [location(f)] }),
        })),
      },
    ],
  };
  return JSON.stringify(log, null, 2) + '\n';
}

function firstSentence(text: string): string {
  const end = text.indexOf('. ');
  return end < 0 ? text : text.slice(0, end + 1);
}

function location(finding: SarifFinding): Record<string, unknown> | undefined {
  const uri = finding.file !== undefined ? fileUri(finding.file) : undefined;
  if (uri === undefined && !finding.resource) return undefined;
  return {
    ...(uri !== undefined && {
      physicalLocation: {
        artifactLocation: { uri },
        ...(finding.line !== undefined && {
          region: { startLine: finding.line, ...(finding.column !== undefined && { startColumn: finding.column }) },
        }),
      },
    }),
    ...(finding.resource && {
      logicalLocations: [
        { name: finding.resource.name, fullyQualifiedName: `${finding.resource.kind}/${refName(finding.resource)}`, kind: 'resource' },
      ],
    }),
  };
}

/**
 * A manifest path as a URI reference: relative paths stay relative (to the repository root, where CI
 * runs), absolute ones become `file://` URIs; every path segment is percent-encoded. Standard input has none.
 */
function fileUri(file: string): string | undefined {
  if (file === '<stdin>') return undefined;
  const encoded = file.replace(/^(\.\/)+/, '').split('/').map(encodeURIComponent).join('/');
  return isAbsolute(file) ? `file://${encoded}` : encoded;
}
