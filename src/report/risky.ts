import type { Provenance } from '../model/provenance.js';
import { compareStrings } from '../model/order.js';
import type { BuildResult } from '../build/build.js';
import type { Snapshot, SourceObject } from '../sources/snapshot.js';
import { annotationPrefix } from '../translate/ingress/annotations/index.js';
import { provenanceOf } from '../translate/settle/provenance.js';
import { wildcardCovers } from '../translate/settle/wildcards.js';
import { accessWidenings } from './access-widening.js';
import { backendLabel, certificateLabel, hostLabel, pathLabel } from './routes-format.js';
import { provenanceKey, type RouteRow, type RouteTable } from './routes.js';

/**
 * Risky changes: what a reviewer must not miss in a route diff. Each rule compares the base (the target
 * branch) with the new config and names the resource to look at.
 */

export const riskyRules = {
  'backend-verification-off': 'Backend certificate verification was turned off (or the backend is no longer reached over TLS).',
  'backend-ca-changed': 'The CA that backend certificates are verified against changed.',
  'tls-mode-changed': 'A host moved between TLS termination and passthrough: with passthrough nginx sees no HTTP, so paths, redirects, HSTS and other HTTP features stop applying.',
  'default-certificate': 'A host that asks for TLS is now served with the default certificate (its Secret is missing or invalid), which no client trusts; or its Secret was in the manifests and is not any more, so it is served with the default certificate unless the cluster has it.',
  'certificate-expiring': 'A newly served certificate expires within 30 days.',
  'wildcard-capture': 'A host name is now answered by a wildcard route instead of the route that answered it before.',
  'claim-lost': 'A resource that held a host or path now loses it to an older claim by another resource.',
  'access-control-removed': 'An access-control annotation (auth-*, whitelist-source-range, denylist-source-range, satisfy) was removed from an Ingress.',
  'access-control-widened':
    'An Ingress lets more through: its allow-list admits more addresses or its deny-list fewer, client-certificate verification is relaxed (verify-client, chain depth), satisfy turned to any, or the auth service, users Secret, client CA or subject changed.',
  'listener-not-programmed': 'A Gateway listener that was Programmed is not any more.',
} as const;

export type RiskyRule = keyof typeof riskyRules;

export interface RiskyChange {
  readonly rule: RiskyRule;
  readonly port?: number;
  readonly host?: string;
  readonly path?: string;
  readonly message: string;
  /** The resource to look at, in the new input (in the base when it is gone). */
  readonly resource?: Provenance;
}

/**
 * One side of a review: its route table and the little the rules need besides. Small on purpose: the
 * base's build and snapshot can be freed before the new side is built.
 */
export interface ReviewSide {
  readonly table: RouteTable;
  readonly statuses: BuildResult['statuses'];
  /** Our Ingresses (rendered or not) and the Gateways, by `namespace/name`. */
  readonly ingresses: ReadonlyMap<string, SourceObject>;
  readonly gateways: ReadonlyMap<string, SourceObject>;
}

export function reviewSide(result: BuildResult, table: RouteTable, snapshot: Snapshot): ReviewSide {
  const ours = new Set(result.ingresses.map((i) => `${i.namespace}/${i.name}`));
  const byName = (kind: string, keep: (id: string) => boolean) =>
    new Map(
      snapshot.objects
        .filter((o) => o.kind === kind && keep(`${o.metadata.namespace}/${o.metadata.name}`))
        .map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]),
    );
  return { table, statuses: result.statuses, ingresses: byName('Ingress', (id) => ours.has(id)), gateways: byName('Gateway', () => true) };
}

const expiryWindowMs = 30 * 24 * 60 * 60 * 1000;

export function riskyChanges(base: ReviewSide, next: ReviewSide, now: Date): RiskyChange[] {
  const baseRows = new Map(base.table.rows.map((r) => [r.key, r]));
  const changes: RiskyChange[] = [
    ...backendTlsChanges(baseRows, next.table.rows),
    ...tlsModeChanges(base.table.rows, next.table.rows),
    ...defaultCertificateChanges(base.table.rows, next.table.rows),
    ...expiringCertificates(base.table.rows, next.table.rows, now),
    ...wildcardCaptures(base.table.rows, next.table.rows),
    ...lostClaims(base.table.rows, next.table.rows),
    ...removedAccessControl(base, next),
    ...widenedAccessControl(base, next),
    ...listenersNoLongerProgrammed(base, next),
  ];
  const ruleOrder = Object.keys(riskyRules);
  return changes.sort(
    (a, b) =>
      ruleOrder.indexOf(a.rule) - ruleOrder.indexOf(b.rule) ||
      (a.port ?? 0) - (b.port ?? 0) ||
      compareStrings(a.host ?? '', b.host ?? '') ||
      compareStrings(a.path ?? '', b.path ?? '') ||
      compareStrings(a.message, b.message),
  );
}

function at(row: RouteRow): Pick<RiskyChange, 'port' | 'host' | 'path' | 'resource'> {
  return { port: row.port, host: row.host, path: pathLabel(row), ...(row.claimant && { resource: row.claimant }) };
}

function backendTlsChanges(baseRows: ReadonlyMap<string, RouteRow>, rows: readonly RouteRow[]): RiskyChange[] {
  const changes: RiskyChange[] = [];
  for (const row of rows) {
    const before = baseRows.get(row.key);
    if (!before?.backendTls?.verify) continue;
    const after = row.backendTls;
    if (!after?.verify) {
      changes.push({
        rule: 'backend-verification-off',
        ...at(row),
        message: `backend certificate verification is off now (was: ${backendLabel(before)}; now: ${backendLabel(row)})`,
      });
    } else if (before.backendTls.ca?.sha256 !== after.ca?.sha256 || before.backendTls.ca?.file !== after.ca?.file) {
      changes.push({
        rule: 'backend-ca-changed',
        ...at(row),
        message: `backend certificates are verified against another CA now (was: ${caLabel(before)}; now: ${caLabel(row)})`,
      });
    }
  }
  return changes;
}

function caLabel(row: RouteRow): string {
  const ca = row.backendTls?.ca;
  if (!ca) return 'no CA';
  return `${ca.subject ?? ca.file}${ca.sha256 !== undefined ? `, sha256 ${ca.sha256.slice(0, 16)}` : ''}`;
}

type TlsHandling = 'passthrough' | 'termination';

/** How each (port, host) handles TLS, and a row that shows it. */
function tlsHandling(rows: readonly RouteRow[]): Map<string, { handling: TlsHandling; row: RouteRow }> {
  const hosts = new Map<string, { handling: TlsHandling; row: RouteRow }>();
  for (const row of rows) {
    const handling: TlsHandling | undefined =
      row.mode === 'passthrough' ? 'passthrough' : row.mode === 'terminate' || row.mode === 'terminate+reencrypt' ? 'termination' : undefined;
    const id = `${row.port} ${row.host}`;
    if (handling && !hosts.has(id)) hosts.set(id, { handling, row });
  }
  return hosts;
}

function tlsModeChanges(baseRows: readonly RouteRow[], rows: readonly RouteRow[]): RiskyChange[] {
  const before = tlsHandling(baseRows);
  const changes: RiskyChange[] = [];
  for (const [id, after] of tlsHandling(rows)) {
    const was = before.get(id);
    if (!was || was.handling === after.handling) continue;
    changes.push({
      rule: 'tls-mode-changed',
      ...at(after.row),
      path: '',
      message:
        after.handling === 'passthrough'
          ? `TLS for ${hostLabel(after.row.host)} on port ${after.row.port} is passed through now (was terminated): paths, redirects and HSTS no longer apply to its TLS traffic`
          : `TLS for ${hostLabel(after.row.host)} on port ${after.row.port} is terminated here now (was passed through to the backend)`,
    });
  }
  return changes;
}

function certificatesByHost(rows: readonly RouteRow[]): Map<string, RouteRow> {
  const hosts = new Map<string, RouteRow>();
  for (const row of rows) {
    const id = `${row.port} ${row.host}`;
    if (row.certificate && !hosts.has(id)) hosts.set(id, row);
  }
  return hosts;
}

function defaultCertificateChanges(baseRows: readonly RouteRow[], rows: readonly RouteRow[]): RiskyChange[] {
  const before = certificatesByHost(baseRows);
  const changes: RiskyChange[] = [];
  for (const [id, row] of certificatesByHost(rows)) {
    const was = before.get(id)?.certificate;
    const expectedFrom = row.certificate?.expectedFrom;
    if (expectedFrom !== undefined && was?.source === 'secret' && was.expectedFrom === undefined) {
      changes.push({
        rule: 'default-certificate',
        ...at(row),
        path: '',
        message: `the Secret for ${hostLabel(row.host)} is not in the manifests any more (was: Secret ${was.secret ?? '?'}; now: Secret ${row.certificate?.secret ?? '?'}, ${expectedFrom}); unless the cluster has it, the default certificate is served`,
      });
      continue;
    }
    if (row.certificate?.source !== 'default' || was?.source === 'default') continue;
    changes.push({
      rule: 'default-certificate',
      ...at(row),
      path: '',
      message: `${hostLabel(row.host)} asks for TLS but is served with the default certificate (${row.certificate.defaultReason ?? 'default'})`,
    });
  }
  return changes;
}

function expiringCertificates(baseRows: readonly RouteRow[], rows: readonly RouteRow[], now: Date): RiskyChange[] {
  const before = certificatesByHost(baseRows);
  const changes: RiskyChange[] = [];
  for (const [id, row] of certificatesByHost(rows)) {
    const notAfter = row.certificate?.notAfter;
    if (notAfter === undefined || Date.parse(notAfter) - now.getTime() > expiryWindowMs) continue;
    const was = before.get(id);
    if (was && certificateLabel(was) === certificateLabel(row)) continue;
    const days = Math.floor((Date.parse(notAfter) - now.getTime()) / (24 * 60 * 60 * 1000));
    changes.push({
      rule: 'certificate-expiring',
      ...at(row),
      path: '',
      message: `the certificate now served for ${hostLabel(row.host)} expires on ${notAfter} (in ${days} day(s)): ${certificateLabel(row)}`,
    });
  }
  return changes;
}

function wildcardCaptures(baseRows: readonly RouteRow[], rows: readonly RouteRow[]): RiskyChange[] {
  const firstByPortHost = (list: readonly RouteRow[]) => {
    const byPortHost = new Map<string, RouteRow>();
    for (const row of list) if (!byPortHost.has(`${row.port} ${row.host}`)) byPortHost.set(`${row.port} ${row.host}`, row);
    return byPortHost;
  };
  const before = firstByPortHost(baseRows);
  const after = firstByPortHost(rows);
  const wildcards = [...after.values()].filter((r) => r.host.startsWith('*.'));
  const changes: RiskyChange[] = [];
  // A name with routes of its own in the base that has none now: the longest wildcard that covers it
  // answers it now (exact names beat wildcards, so one that keeps its routes is never captured).
  for (const row of before.values()) {
    if (row.host === '' || row.host.startsWith('*.') || after.has(`${row.port} ${row.host}`)) continue;
    const wildcard = wildcards
      .filter((w) => w.port === row.port && wildcardCovers(w.host, row.host))
      .sort((a, b) => b.host.length - a.host.length)[0];
    if (!wildcard) continue;
    changes.push({
      rule: 'wildcard-capture',
      ...at(wildcard),
      host: row.host,
      path: '',
      message: `${row.host} on port ${row.port} is answered by the wildcard ${wildcard.host} now (${wildcard.claimant ? provenanceKey(wildcard.claimant) : 'no claimant'}), no longer by ${row.claimant ? provenanceKey(row.claimant) : 'its own route'}`,
    });
  }
  return changes;
}

function lostClaims(baseRows: readonly RouteRow[], rows: readonly RouteRow[]): RiskyChange[] {
  const claimedBefore = new Map<string, Set<string>>();
  const lostBefore = new Map<string, Set<string>>();
  const add = (map: Map<string, Set<string>>, id: string, key: string) => map.set(id, (map.get(id) ?? new Set()).add(key));
  for (const row of baseRows) {
    const id = `${row.port} ${row.host}`;
    if (row.claimant) add(claimedBefore, id, provenanceKey(row.claimant));
    for (const loser of row.losers) add(lostBefore, id, provenanceKey(loser));
  }
  const changes: RiskyChange[] = [];
  const reported = new Set<string>();
  for (const row of rows) {
    const id = `${row.port} ${row.host}`;
    for (const loser of row.losers) {
      const key = provenanceKey(loser);
      if (!claimedBefore.get(id)?.has(key) || lostBefore.get(id)?.has(key) || reported.has(`${id} ${key}`)) continue;
      reported.add(`${id} ${key}`);
      changes.push({
        rule: 'claim-lost',
        ...at(row),
        path: '',
        resource: loser,
        message: `${key} held ${hostLabel(row.host)} on port ${row.port} and now loses it to ${row.claimant ? provenanceKey(row.claimant) : 'another claim'} (older, or first by namespace/name)`,
      });
    }
  }
  return changes;
}

/** Annotations that keep clients out: removing one lets through whoever they kept out. */
const accessControlNames: ReadonlySet<string> = new Set(['whitelist-source-range', 'allowlist-source-range', 'denylist-source-range', 'satisfy']);

/** `name` is without the annotation prefix. */
function isAccessControlAnnotation(name: string): boolean {
  return accessControlNames.has(name) || name.startsWith('auth-');
}

function removedAccessControl(base: ReviewSide, next: ReviewSide): RiskyChange[] {
  const after = next.ingresses;
  const changes: RiskyChange[] = [];
  for (const [id, before] of base.ingresses) {
    const now = after.get(id);
    if (!now) continue;
    const removed = Object.keys(before.metadata.annotations)
      .filter((name) => name.startsWith(annotationPrefix) && isAccessControlAnnotation(name.slice(annotationPrefix.length)))
      .filter((name) => !Object.hasOwn(now.metadata.annotations, name))
      .sort();
    if (removed.length === 0) continue;
    changes.push({
      rule: 'access-control-removed',
      resource: provenanceOf(now, ['metadata', 'annotations']),
      message: `Ingress ${id} no longer has ${removed.join(', ')}: whoever could not reach its backends before may reach them now`,
    });
  }
  return changes;
}

function widenedAccessControl(base: ReviewSide, next: ReviewSide): RiskyChange[] {
  const changes: RiskyChange[] = [];
  for (const [id, before] of base.ingresses) {
    const now = next.ingresses.get(id);
    if (!now) continue;
    for (const widening of accessWidenings(before.metadata.annotations, now.metadata.annotations)) {
      changes.push({
        rule: 'access-control-widened',
        resource: provenanceOf(now, ['metadata', 'annotations', `${annotationPrefix}${widening.annotation}`]),
        message: `Ingress ${id}: ${widening.message}`,
      });
    }
  }
  return changes;
}

function programmedListeners(side: ReviewSide): Map<string, boolean> {
  const listeners = new Map<string, boolean>();
  for (const status of side.statuses) {
    if (status.kind !== 'Gateway') continue;
    for (const listener of status.listeners) {
      const programmed = listener.conditions.some((c) => c.type === 'Programmed' && c.status === 'True');
      listeners.set(`${status.namespace}/${status.name} ${listener.name}`, programmed);
    }
  }
  return listeners;
}

function listenersNoLongerProgrammed(base: ReviewSide, next: ReviewSide): RiskyChange[] {
  const after = programmedListeners(next);
  const changes: RiskyChange[] = [];
  for (const [id, wasProgrammed] of programmedListeners(base)) {
    if (!wasProgrammed || after.get(id) !== false) continue;
    const [gateway = '', listener = ''] = id.split(' ');
    const object = next.gateways.get(gateway);
    const listeners = (object?.raw['spec'] as { listeners?: { name?: unknown }[] } | undefined)?.listeners ?? [];
    const index = listeners.findIndex((l) => l.name === listener);
    changes.push({
      rule: 'listener-not-programmed',
      ...(object && { resource: provenanceOf(object, index >= 0 ? ['spec', 'listeners', index] : ['spec', 'listeners']) }),
      message: `listener ${listener} of Gateway ${gateway} was Programmed and is not any more: its routes get no traffic through it`,
    });
  }
  return changes;
}
