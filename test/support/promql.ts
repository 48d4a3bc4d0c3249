/**
 * Enough of PromQL and the text exposition to ask whether a dashboard query finds series: the metric
 * selectors of a query with their label matchers, and the `by (...)`/`label_values(..., label)` labels
 * it groups or lists by. Not a PromQL parser: dashboards' queries are selectors inside functions.
 */

export interface Matcher {
  readonly label: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

export interface Selector {
  readonly metric: string;
  readonly matchers: readonly Matcher[];
  /** Labels the query groups or lists by; each must be on the series (`le` only on `_bucket`). */
  readonly groupedBy: readonly string[];
}

export function selectorsOf(query: string): Selector[] {
  const groupedBy = [...query.matchAll(/\bby\s*\(([^)]*)\)/g)].flatMap((m) => (m[1] ?? '').split(',').map((l) => l.trim()).filter(Boolean));
  const listed = /label_values\((?:[^{},]|\{[^}]*\})*,\s*([a-zA-Z_]+)\s*\)/.exec(query)?.[1];
  const selectors: Selector[] = [];
  for (const match of query.matchAll(/\b((?:nginx_ingress_controller|ingress2nginx|process|nodejs)_[a-zA-Z0-9_]+)\s*(\{([^}]*)\})?/g)) {
    const matchers = [...(match[3] ?? '').matchAll(/([a-zA-Z_]+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)].map(
      (m): Matcher => ({ label: m[1] as string, op: m[2] as Matcher['op'], value: m[3] as string }),
    );
    const metric = match[1] as string;
    const labels = [...groupedBy, ...(listed ? [listed] : [])].filter((l) => l !== 'le' || metric.endsWith('_bucket'));
    selectors.push({ metric, matchers, groupedBy: labels });
  }
  return selectors;
}

export interface Series {
  readonly metric: string;
  readonly labels: ReadonlyMap<string, string>;
}

/** Every sample line of a text exposition. */
export function seriesOf(exposition: string): Series[] {
  const series: Series[] = [];
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!match) continue;
    const labels = new Map([...(match[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] as string, m[2] as string]));
    series.push({ metric: match[1] as string, labels });
  }
  return series;
}

/**
 * The series as Prometheus stores it when it scrapes the Pod: the target's labels added (the Pod's
 * `namespace`, `instance`, `kubernetes_pod_name`, `job`), and a `namespace` label of the series itself
 * renamed `exported_namespace`, as ingress-nginx's dashboards expect.
 */
export function asScraped(series: Series): Series {
  const labels = new Map(series.labels);
  const own = labels.get('namespace');
  if (own !== undefined) labels.set('exported_namespace', own);
  for (const target of ['namespace', 'instance', 'kubernetes_pod_name', 'job']) labels.set(target, 'target');
  return { metric: series.metric, labels };
}

/**
 * Whether a series satisfies a selector's names: every label a matcher or grouping names is there, and a
 * literal `=` matcher has its value (a matcher on a dashboard variable, `$x`, takes any value).
 */
export function finds(selector: Selector, series: Series): boolean {
  if (series.metric !== selector.metric) return false;
  for (const matcher of selector.matchers) {
    const value = series.labels.get(matcher.label);
    if (value === undefined) return false;
    if (matcher.op === '=' && !matcher.value.includes('$') && value !== matcher.value) return false;
  }
  return selector.groupedBy.every((label) => series.labels.has(label));
}
