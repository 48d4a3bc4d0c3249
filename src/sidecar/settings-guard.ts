/**
 * Operator settings fail safe, not closed: in the cluster mode a change of the controller ConfigMap that
 * is invalid (an error at one of its keys), or that would leave out Ingresses the last good settings
 * served, is not applied. The round serves the build with the last good ConfigMap instead, and says once,
 * at the ConfigMap key, which key and why (a `configmap-rejected` error: an Event, the log, a metric).
 * With no last good ConfigMap (the first one the process sees) the change is taken as it is: a bad
 * security setting then answers 503 where it guards (translate/ingress/behaviour.ts), never open.
 */
import { formatFieldPath, type Diagnostic } from '../model/diagnostics.js';
import { compareStrings } from '../model/order.js';
import { leftOutCodes } from '../report/migration.js';
import type { Snapshot, SourceObject } from '../sources/snapshot.js';

export interface SettingsVerdict {
  /** The ConfigMap keys the change is refused at (each said once), empty when it is taken. */
  readonly rejected: readonly { readonly key: string; readonly diagnostic: Diagnostic }[];
}

/** The controller ConfigMap of `snapshot` (`namespace/name`), if it holds one. */
export function controllerConfigMapIn(snapshot: Snapshot, id: string): SourceObject | undefined {
  return snapshot.objects.find((o) => o.kind === 'ConfigMap' && `${o.metadata.namespace}/${o.metadata.name}` === id);
}

/** `snapshot` with `configMap` in place of the controller ConfigMap of the same name. */
export function withControllerConfigMap(snapshot: Snapshot, configMap: SourceObject): Snapshot {
  const id = `${configMap.metadata.namespace}/${configMap.metadata.name}`;
  return { objects: [...snapshot.objects.filter((o) => !(o.kind === 'ConfigMap' && `${o.metadata.namespace}/${o.metadata.name}` === id)), configMap] };
}

/** The keys whose values differ between two versions of the ConfigMap, sorted. */
export function changedKeys(before: SourceObject, after: SourceObject): string[] {
  const data = (o: SourceObject) => (o.raw['data'] ?? {}) as Readonly<Record<string, unknown>>;
  const [a, b] = [data(before), data(after)];
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((key) => a[key] !== b[key]).sort(compareStrings);
}

/** Errors a build found at the controller ConfigMap's keys: the change is invalid there. */
function invalidKeys(diagnostics: readonly Diagnostic[], configMap: SourceObject): { key: string; message: string }[] {
  const found = new Map<string, string>();
  for (const d of diagnostics) {
    if (d.severity !== 'error' || !isAbout(d, configMap)) continue;
    const key = d.path?.[0] === 'data' && typeof d.path[1] === 'string' ? d.path[1] : '';
    if (!found.has(key)) found.set(key, d.message);
  }
  return [...found].map(([key, message]) => ({ key, message })).sort((a, b) => compareStrings(a.key, b.key));
}

/** Ingresses (`namespace/name`) a build leaves out. */
function leftOutIngresses(diagnostics: readonly Diagnostic[]): Set<string> {
  return new Set(diagnostics.filter((d) => d.resource?.kind === 'Ingress' && leftOutCodes.has(d.code)).map((d) => `${d.resource?.namespace}/${d.resource?.name}`));
}

/** What the last good settings left standing: errors at the ConfigMap's keys that do not refuse a change. */
export function errorsAt(diagnostics: readonly Diagnostic[], configMap: SourceObject): Set<string> {
  return new Set(invalidKeys(diagnostics, configMap).map(({ key, message }) => `${key}\u0000${message}`));
}

/** What the guard compares: the ConfigMap now and last served, and the errors the last good one had. */
export interface SettingsChange {
  readonly current: SourceObject;
  readonly lastGood: SourceObject;
  readonly lastGoodErrors: ReadonlySet<string>;
}

/**
 * Whether the candidate build's ConfigMap may replace the last good one: refused at each key with an
 * error the last good one did not have, else, when `withLastGood` (the same resources with the last
 * good ConfigMap) serves Ingresses the candidate leaves out, at the changed keys.
 */
export function settingsVerdict(candidate: readonly Diagnostic[], withLastGood: () => readonly Diagnostic[], change: SettingsChange): SettingsVerdict {
  const { current, lastGood } = change;
  const invalid = invalidKeys(candidate, current).filter(({ key, message }) => !change.lastGoodErrors.has(`${key}\u0000${message}`));
  if (invalid.length > 0) {
    return { rejected: invalid.map(({ key, message }) => ({ key, diagnostic: rejection(current, key, `${message}. This change is not applied: the last good settings stay until it is fixed`) })) };
  }
  const served = leftOutIngresses(withLastGood());
  const lost = [...leftOutIngresses(candidate)].filter((id) => !served.has(id)).sort(compareStrings);
  if (lost.length === 0) return { rejected: [] };
  const keys = changedKeys(lastGood, current);
  const key = keys[0] ?? '';
  const message = `this change (${keys.map((k) => JSON.stringify(k)).join(', ')}) would leave out Ingresses the last good settings serve (${lost.join(', ')}); it is not applied, and the last good settings stay until it is fixed`;
  return { rejected: [{ key, diagnostic: rejection(current, key, message) }] };
}

function isAbout(d: Diagnostic, object: SourceObject): boolean {
  return d.resource?.kind === object.kind && (d.resource.namespace ?? '') === (object.metadata.namespace ?? '') && d.resource.name === object.metadata.name;
}

function rejection(configMap: SourceObject, key: string, message: string): Diagnostic {
  const path = key === '' ? [] : ['data', key];
  return {
    severity: 'error',
    code: 'configmap-rejected',
    resource: { kind: configMap.kind, ...(configMap.metadata.namespace && { namespace: configMap.metadata.namespace }), name: configMap.metadata.name },
    ...(path.length > 0 && { field: formatFieldPath(path), path }),
    message,
  };
}
