/**
 * Reads the ingress-nginx annotations of one Ingress into checked values. Never throws: a rejected
 * value becomes an issue plus the field's fallback, and the translator decides how to degrade (an issue
 * that `leavesOut` keeps the whole Ingress out).
 */
import type { Severity } from '../../../model/diagnostics.js';
import { compareStrings } from '../../../model/order.js';
import { describeRejectedValue, quoteKey } from '../../checks/allowlist.js';
import { canaryAnnotations } from './canary.js';
import { catalogEntry } from './catalog.js';
import { allRules, families } from './families.js';
import { annotationPrefix, type AnnotationRule, type RuleTable, type ValuesOf } from './rule.js';
import { isSnippetKey, snippetRefusedReason } from './snippets.js';
import { sslPassthroughAnnotations } from './ssl-passthrough.js';

export { annotationPrefix } from './rule.js';
export { backendProtocolNames, type BackendProtocolName } from './backend-protocol.js';
export type { NamespacedName, SecretReference } from './references.js';

export interface AnnotationIssue {
  severity: Severity;
  code: string;
  /** Full annotation key, prefix included. */
  annotation: string;
  message: string;
  /** The Ingress must not be rendered: a refused annotation, or a rejected value that fails closed. */
  leavesOut: boolean;
}

type Families = typeof families;

export type IngressAnnotations = { [Family in keyof Families]: ValuesOf<Families[Family]> } & {
  /**
   * Full keys of annotations present that act on HTTP traffic (everything in our prefix except
   * ssl-passthrough and the canary family): the translator says they are ignored where they cannot act.
   */
  httpLevelAnnotations: string[];
};

/** Names (and aliases) of the annotations we implement, without the prefix. */
export const implementedAnnotationNames: ReadonlySet<string> = new Set(allRules.flatMap((rule) => [rule.name, ...(rule.aliases ?? [])]));

const canaryNames: ReadonlySet<string> = new Set(Object.values(canaryAnnotations).map((rule) => rule.name));

interface ParsedAnnotations {
  value: IngressAnnotations;
  issues: AnnotationIssue[];
}

/**
 * Ingresses mostly repeat a few sets of our annotations (a chart's, a copied manifest's), so each set is
 * read once: at 10,000 Ingresses that is a tenth of the build. The values are shared between Ingresses
 * and never changed (defaults were always shared); each caller gets its own list of issues.
 *
 * The cache lives as long as the process (the cluster mode builds again at every change), so it is
 * bounded by what it holds, not by a count of sets: a tenant rewriting Ingresses with fresh 150 KB
 * annotations filled a heap when 4,096 sets were allowed. A set costs about its text and its parsed
 * values, taken as four times the text; a set too large to be a chart's is not kept at all, and the
 * least recently used go first.
 */
const parsedSets = new Map<string, ParsedAnnotations>();
const parsedSetsBudget = 32 * 1024 * 1024;
const largestCachedSet = 16 * 1024;
const costOf = (setKey: string) => 4 * setKey.length;
let parsedSetsCost = 0;

export function parseIngressAnnotations(annotations: Readonly<Record<string, string>>): ParsedAnnotations {
  const ours = Object.keys(annotations)
    .filter((key) => key.startsWith(annotationPrefix))
    .sort(compareStrings);
  const setKey = JSON.stringify(ours.map((key) => [key, annotations[key]]));
  let parsed = parsedSets.get(setKey);
  if (parsed) {
    // Most recently used last.
    parsedSets.delete(setKey);
    parsedSets.set(setKey, parsed);
  } else {
    parsed = parseOurAnnotations(annotations, ours);
    if (setKey.length <= largestCachedSet) {
      for (const [oldest] of parsedSets) {
        if (parsedSetsCost + costOf(setKey) <= parsedSetsBudget) break;
        parsedSets.delete(oldest);
        parsedSetsCost -= costOf(oldest);
      }
      parsedSets.set(setKey, parsed);
      parsedSetsCost += costOf(setKey);
    }
  }
  return { value: parsed.value, issues: parsed.issues.map((issue) => ({ ...issue })) };
}

function parseOurAnnotations(annotations: Readonly<Record<string, string>>, ours: readonly string[]): ParsedAnnotations {
  const issues: AnnotationIssue[] = [];
  const differing: { key: string; note: string }[] = [];

  for (const key of ours) {
    const name = key.slice(annotationPrefix.length);
    const entry = catalogEntry(name);
    if (isSnippetKey(name)) {
      issues.push({
        severity: 'error',
        code: 'snippet-refused',
        annotation: key,
        message: `${quoteKey(key)} is refused. ${snippetRefusedReason}`,
        leavesOut: true,
      });
    } else if (implementedAnnotationNames.has(name)) {
      if (entry?.status === 'differs') differing.push({ key, note: entry.note });
    } else if (entry?.status === 'refused') {
      issues.push({
        severity: 'error',
        code: 'annotation-refused',
        annotation: key,
        message: `${quoteKey(key)} is ${entry.note}; the Ingress is not rendered.`,
        leavesOut: true,
      });
    } else if (entry) {
      issues.push({
        severity: 'warning',
        code: 'annotation-unsupported',
        annotation: key,
        message: `${quoteKey(key)} is an ingress-nginx annotation that ingress2nginx ignores: ${entry.note}.`,
        leavesOut: false,
      });
    } else {
      issues.push({
        severity: 'warning',
        code: 'annotation-unknown',
        annotation: key,
        message: `${quoteKey(key)} is not an ingress-nginx annotation known to ingress2nginx (a typo?); it is ignored.`,
        leavesOut: false,
      });
    }
  }

  const readFamily = <Table extends RuleTable>(table: Table): ValuesOf<Table> =>
    Object.fromEntries(Object.entries(table).map(([field, rule]) => [field, readAnnotation(rule, annotations, issues)])) as ValuesOf<Table>;
  const value = {
    ...(Object.fromEntries(Object.entries(families).map(([family, table]) => [family, readFamily(table)])) as {
      [Family in keyof Families]: ValuesOf<Families[Family]>;
    }),
    httpLevelAnnotations: ours.filter((key) => {
      const name = key.slice(annotationPrefix.length);
      return name !== sslPassthroughAnnotations.sslPassthrough.name && !canaryNames.has(name);
    }),
  };
  // Where a value was accepted and we differ from ingress-nginx, say so at the annotation.
  const rejected = new Set(issues.filter((issue) => issue.code === 'annotation-invalid').map((issue) => issue.annotation));
  for (const { key, note } of differing) {
    if (rejected.has(key)) continue;
    issues.push({ severity: 'info', code: 'annotation-differs', annotation: key, message: `${quoteKey(key)} differs from ingress-nginx on purpose: ${note}.`, leavesOut: false });
  }
  issues.sort((a, b) => compareStrings(a.annotation, b.annotation) || compareStrings(a.code, b.code));
  return { value, issues };
}

/** What zod says of a refinement without a message of its own; ours say what is wrong. */
const zodDefaultMessage = 'Invalid input';

function readAnnotation<T>(rule: AnnotationRule<T>, annotations: Readonly<Record<string, string>>, issues: AnnotationIssue[]): T {
  const name = [rule.name, ...(rule.aliases ?? [])].find((candidate) => annotations[annotationPrefix + candidate] !== undefined);
  if (name === undefined) return rule.defaultValue;
  const key = annotationPrefix + name;
  const raw = annotations[key]!;
  const parsed = rule.schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const respelled = rule.spellings?.[raw.trim().toLowerCase()];
  const reread = respelled === undefined ? undefined : rule.schema.safeParse(respelled);
  if (reread?.success) {
    issues.push({
      severity: 'info',
      code: 'annotation-spelling',
      annotation: key,
      message: `${quoteKey(key)} is ${JSON.stringify(raw.trim())}, read as ${JSON.stringify(respelled)}, as ingress-nginx reads it; write ${JSON.stringify(respelled)}.`,
      leavesOut: false,
    });
    return reread.data;
  }
  // Our refinements explain what is wrong in words of their own, never by quoting the value.
  const problem = parsed.error.issues.find((issue) => issue.code === 'custom' && issue.message !== zodDefaultMessage)?.message;
  const fallback = rule.failsClosed
    ? ' The Ingress is not rendered until this is fixed: a fallback could open a backend or send its traffic where it was not meant to go.'
    : ' Falling back to its default, as ingress-nginx does.';
  issues.push({
    severity: 'error',
    code: 'annotation-invalid',
    annotation: key,
    message: `${quoteKey(key)} rejected: the value ${describeRejectedValue(raw)}${problem ? ` (it ${problem})` : ''}. Expected ${rule.accepted}.${fallback}`,
    leavesOut: rule.failsClosed === true,
  });
  return rule.fallbackValue !== undefined ? rule.fallbackValue : rule.defaultValue;
}
