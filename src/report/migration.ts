/**
 * The migration report of `ingress2nginx audit`: for every ingress-nginx annotation and ConfigMap key in
 * use, how many Ingresses use it and what ingress2nginx does with it (from the catalog), and which
 * Ingresses would not be served as written, with the diagnostics that say why. Pure: it reads the
 * snapshot and the build's diagnostics, nothing else.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import { compareStrings } from '../model/order.js';
import type { BuildResult } from '../build/build.js';
import type { Snapshot } from '../sources/snapshot.js';
import { annotationPrefix } from '../translate/ingress/annotations/rule.js';
import { annotationCatalog, configMapCatalog, type CatalogStatus } from '../translate/ingress/annotations/catalog.js';
import { isSnippetKey, snippetRefusedReason } from '../translate/ingress/annotations/snippets.js';
import { snippetUsages, type SnippetUsage } from './snippet-replacements.js';

/** `unknown`: not an ingress-nginx name we know (a typo, or another controller's). */
export type UsageStatus = CatalogStatus | 'unknown';

export interface AnnotationUsage {
  /** Without the prefix. */
  readonly name: string;
  readonly status: UsageStatus;
  /** Ingresses of our class that carry it. */
  readonly ingresses: number;
  /** Up to five of them, `namespace/name`, sorted. */
  readonly examples: readonly string[];
  readonly note: string;
}

export interface ConfigMapKeyUsage {
  readonly key: string;
  readonly status: UsageStatus;
  readonly note: string;
}

export interface IngressOutcome {
  readonly namespace: string;
  readonly name: string;
  /** `left-out`: not rendered at all; `degraded`: rendered, but not all of it as written. */
  readonly outcome: 'left-out' | 'degraded';
  /** Its error diagnostics, which say what to do. */
  readonly errors: readonly Diagnostic[];
}

export interface MigrationReport {
  /** Ingresses of the class we serve. */
  readonly ingresses: number;
  readonly annotations: readonly AnnotationUsage[];
  /** `namespace/name` of the controller ConfigMap, when one was given and found. */
  readonly configMap?: string;
  readonly configMapKeys: readonly ConfigMapKeyUsage[];
  /** Ingresses that would not be served as written, worst first, then by name. */
  readonly ingressesWithErrors: readonly IngressOutcome[];
  /** Every snippet in use, directive by directive, with what replaces it. */
  readonly snippets: readonly SnippetUsage[];
}

/** Codes that mean the whole Ingress is not rendered. */
export const leftOutCodes: ReadonlySet<string> = new Set(['ingress-skipped', 'canary-invalid', 'resource-invalid', 'nginx-rejected']);

const maxExamples = 5;

export function migrationReport(snapshot: Snapshot, result: BuildResult, configMap: string | undefined): MigrationReport {
  const ours = new Set(result.ingresses.map((i) => `${i.namespace}/${i.name}`));
  const ingresses = snapshot.objects.filter((o) => o.kind === 'Ingress' && ours.has(`${o.metadata.namespace}/${o.metadata.name}`));

  const users = new Map<string, string[]>();
  for (const ingress of ingresses) {
    for (const key of Object.keys(ingress.metadata.annotations)) {
      if (!key.startsWith(annotationPrefix)) continue;
      const name = key.slice(annotationPrefix.length);
      users.set(name, [...(users.get(name) ?? []), `${ingress.metadata.namespace}/${ingress.metadata.name}`]);
    }
  }
  const catalog = new Map(annotationCatalog.map((entry) => [entry.name, entry]));
  const annotations = [...users]
    .map(([name, using]): AnnotationUsage => {
      const entry = catalog.get(name);
      const status: UsageStatus = entry?.status ?? (isSnippetKey(name) ? 'refused' : 'unknown');
      const note =
        entry?.note ??
        (isSnippetKey(name) ? `refused: ${snippetRefusedReason}` : 'not an ingress-nginx annotation ingress2nginx knows (a typo?); ignored');
      return { name, status, ingresses: using.length, examples: [...using].sort(compareStrings).slice(0, maxExamples), note };
    })
    .sort((a, b) => statusRank[a.status] - statusRank[b.status] || b.ingresses - a.ingresses || compareStrings(a.name, b.name));

  const configMapObject =
    configMap === undefined
      ? undefined
      : snapshot.objects.find((o) => o.kind === 'ConfigMap' && `${o.metadata.namespace}/${o.metadata.name}` === configMap);
  const data = (configMapObject?.raw['data'] ?? {}) as Record<string, unknown>;
  const keyCatalog = new Map(configMapCatalog.map((entry) => [entry.key, entry]));
  const configMapKeys = Object.keys(data)
    .map((key): ConfigMapKeyUsage => {
      const entry = keyCatalog.get(key);
      if (entry) return { key, status: entry.status, note: entry.note };
      if (isSnippetKey(key)) return { key, status: 'refused', note: `refused: ${snippetRefusedReason}` };
      return { key, status: 'ignored', note: 'not read by ingress2nginx; nginx\'s or our default applies' };
    })
    .sort((a, b) => statusRank[a.status] - statusRank[b.status] || compareStrings(a.key, b.key));

  const errorsByIngress = new Map<string, Diagnostic[]>();
  for (const diagnostic of result.diagnostics) {
    if (diagnostic.severity !== 'error' || diagnostic.resource?.kind !== 'Ingress') continue;
    const id = `${diagnostic.resource.namespace}/${diagnostic.resource.name}`;
    if (!ours.has(id)) continue;
    errorsByIngress.set(id, [...(errorsByIngress.get(id) ?? []), diagnostic]);
  }
  const ingressesWithErrors = [...errorsByIngress]
    .map(([id, errors]): IngressOutcome => {
      const [namespace = '', name = ''] = id.split('/');
      return { namespace, name, outcome: errors.some((e) => leftOutCodes.has(e.code)) ? 'left-out' : 'degraded', errors };
    })
    .sort((a, b) => outcomeRank[a.outcome] - outcomeRank[b.outcome] || compareStrings(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`));

  return {
    ingresses: ingresses.length,
    annotations,
    ...(configMapObject && { configMap }),
    configMapKeys,
    ingressesWithErrors,
    snippets: snippetUsages(snapshot, ours, configMapObject ? configMap : undefined),
  };
}

const outcomeRank: Record<IngressOutcome['outcome'], number> = { 'left-out': 0, degraded: 1 };

/** Refused first: what blocks a migration, then what changes, then what is fine. */
const statusRank: Record<UsageStatus, number> = { refused: 0, unknown: 1, ignored: 2, differs: 3, supported: 4 };
