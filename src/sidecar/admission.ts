/**
 * Validating admission (design §5c): the pure half. An AdmissionReview is read into a request, the
 * reviews that need no build are answered at once, the candidate replaces its old version in the
 * snapshot the sidecar holds, and the build's diagnostics about the candidate become the answer, in the
 * one-line words `validate` prints. The TLS server, the queue and the build itself: admission-server.ts.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import { formatText } from '../report/diagnostics-format.js';
import { slimmed, type RawObject } from '../sources/cluster/reflector.js';
import { sourceObject } from '../sources/cluster/snapshot.js';
import type { Snapshot, SourceObject } from '../sources/snapshot.js';
import type { TranslateOptions } from '../translate/options.js';

/** The kinds reviewed, each at its own path (the Ingress one is ingress-nginx's), with the versions read. */
export const reviewedKinds = {
  '/networking/v1/ingresses': { kind: 'Ingress', group: 'networking.k8s.io', versions: ['v1'] },
  '/gateway.networking.k8s.io/gateways': { kind: 'Gateway', group: 'gateway.networking.k8s.io', versions: ['v1', 'v1beta1'] },
  '/gateway.networking.k8s.io/httproutes': { kind: 'HTTPRoute', group: 'gateway.networking.k8s.io', versions: ['v1', 'v1beta1'] },
  '/gateway.networking.k8s.io/grpcroutes': { kind: 'GRPCRoute', group: 'gateway.networking.k8s.io', versions: ['v1'] },
  '/gateway.networking.k8s.io/tlsroutes': { kind: 'TLSRoute', group: 'gateway.networking.k8s.io', versions: ['v1', 'v1alpha3', 'v1alpha2'] },
} as const satisfies Record<string, { kind: string; group: string; versions: readonly string[] }>;

export type ReviewPath = keyof typeof reviewedKinds;
export type ReviewedKind = (typeof reviewedKinds)[ReviewPath]['kind'];

export function isReviewPath(path: string): path is ReviewPath {
  return Object.hasOwn(reviewedKinds, path);
}

/** The parts of an `admission.k8s.io/v1` AdmissionRequest the decision reads. */
export interface ReviewRequest {
  readonly uid: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly operation: string;
  readonly namespace: string;
  readonly name: string;
  readonly object: RawObject | undefined;
  readonly oldObject: RawObject | undefined;
  readonly dryRun: boolean;
}

/** What the review answers; `code` and `message` go to `status` of a denial. */
export type Verdict =
  | { readonly allowed: true; readonly warnings: readonly string[]; readonly why: AllowedWhy }
  | { readonly allowed: false; readonly code: number; readonly message: string; readonly warnings: readonly string[]; readonly why: DeniedWhy };

/** Why a review was answered as it was: the `result` label of the review metric. */
export type AllowedWhy = 'allowed' | 'not-ours' | 'unchanged' | 'delete';
export type DeniedWhy = 'denied' | 'unknown-kind' | 'not-synced' | 'busy' | 'failed';

/** A review that cannot be read: answered with HTTP 400 and this text. */
export class MalformedReview extends Error {}

const object = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The request of an AdmissionReview body, or MalformedReview when it is not an `admission.k8s.io/v1` one. */
export function readReview(body: unknown): ReviewRequest {
  if (!object(body) || body['apiVersion'] !== 'admission.k8s.io/v1' || body['kind'] !== 'AdmissionReview') {
    throw new MalformedReview('expected an AdmissionReview of apiVersion admission.k8s.io/v1');
  }
  const request = body['request'];
  if (!object(request) || text(request['uid']) === '' || !object(request['kind'])) throw new MalformedReview('the AdmissionReview has no request with a uid and a kind');
  const kind = request['kind'];
  const asObject = (value: unknown): RawObject | undefined => (object(value) && object(value['metadata']) ? (value as unknown as RawObject) : undefined);
  return {
    uid: text(request['uid']),
    kind: { group: text(kind['group']), version: text(kind['version']), kind: text(kind['kind']) },
    operation: text(request['operation']),
    namespace: text(request['namespace']),
    name: text(request['name']),
    object: asObject(request['object']),
    oldObject: asObject(request['oldObject']),
    dryRun: request['dryRun'] === true,
  };
}

/** The AdmissionReview that answers `request`. */
export function reviewResponse(uid: string, verdict: Verdict): Record<string, unknown> {
  const warnings = verdict.warnings.length > 0 ? { warnings: verdict.warnings } : {};
  const status = verdict.allowed ? {} : { status: { code: verdict.code, message: verdict.message } };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: verdict.allowed, ...status, ...warnings } };
}

export function denied(why: DeniedWhy, code: number, message: string): Verdict {
  return { allowed: false, code, message, warnings: [], why };
}

/**
 * The answer that needs no build, if there is one: a kind or version this path does not review is
 * denied; DELETE (and CONNECT), objects of another class, and updates that change nothing translate
 * reads are allowed at once.
 */
export function answerWithoutBuild(path: ReviewPath, request: ReviewRequest, snapshot: Snapshot, options: Pick<TranslateOptions, 'ingressClass' | 'gatewayClass'>): Verdict | undefined {
  const expected = reviewedKinds[path];
  if (request.kind.kind !== expected.kind || request.kind.group !== expected.group || !(expected.versions as readonly string[]).includes(request.kind.version)) {
    const { group, version, kind } = request.kind;
    return denied('unknown-kind', 400, `this webhook reviews ${expected.kind} (${expected.group} ${expected.versions.join(', ')}) at ${path}, not ${kind} (${group}/${version})`);
  }
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return { allowed: true, warnings: [], why: 'delete' };
  const candidate = request.object;
  if (!candidate) return denied('unknown-kind', 400, `a ${request.operation} review without an object`);
  if (!servedByUs(expected.kind, candidate, snapshot, options)) return { allowed: true, warnings: [], why: 'not-ours' };
  if (request.operation === 'UPDATE' && request.oldObject && sameForTranslate(request.oldObject, candidate)) return { allowed: true, warnings: [], why: 'unchanged' };
  return undefined;
}

const legacyClassAnnotation = 'kubernetes.io/ingress.class';

/**
 * False only when the object clearly belongs to someone else: an Ingress naming another class, a
 * Gateway of another GatewayClass, a route with no parent among our Gateways. An Ingress without a
 * class is left to the build, which knows whether our IngressClass is the default.
 */
function servedByUs(kind: ReviewedKind, candidate: RawObject, snapshot: Snapshot, options: Pick<TranslateOptions, 'ingressClass' | 'gatewayClass'>): boolean {
  const spec = object(candidate['spec']) ? candidate['spec'] : {};
  if (kind === 'Ingress') {
    const named = typeof spec['ingressClassName'] === 'string' ? spec['ingressClassName'] : (candidate.metadata as Metadata).annotations?.[legacyClassAnnotation];
    return named === undefined || named === options.ingressClass;
  }
  if (kind === 'Gateway') return spec['gatewayClassName'] === options.gatewayClass;
  const ours = new Set(
    snapshot.objects
      .filter((o) => o.kind === 'Gateway' && object(o.raw['spec']) && o.raw['spec']['gatewayClassName'] === options.gatewayClass)
      .map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
  );
  const parents = Array.isArray(spec['parentRefs']) ? spec['parentRefs'] : [];
  return parents.some((parent) => object(parent) && text(parent['kind'] ?? 'Gateway') === 'Gateway' && ours.has(`${text(parent['namespace']) || (candidate.metadata.namespace ?? '')}/${text(parent['name'])}`));
}

const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';

type Metadata = RawObject['metadata'] & { readonly annotations?: Record<string, string>; readonly labels?: unknown; readonly creationTimestamp?: string };

/** The object as translate reads it: everything but status and the metadata it never looks at. */
function translatedPart(raw: RawObject): unknown {
  const { metadata, status: _status, ...rest } = raw as RawObject & { status?: unknown; metadata: Metadata };
  const { [lastApplied]: _applied, ...annotations } = metadata.annotations ?? {};
  return { ...rest, metadata: { name: metadata.name, namespace: metadata.namespace ?? '', annotations, labels: metadata.labels ?? {} } };
}

function sameForTranslate(old: RawObject, candidate: RawObject): boolean {
  return canonical(translatedPart(old)) === canonical(translatedPart(candidate));
}

/** JSON with keys sorted, so that two objects that differ only in key order compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (object(value)) return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/**
 * The candidate as the watches would hold it once written: its namespace from the request, and on
 * CREATE the creation time the API server gives it (now), so that it is the youngest claimant of a host.
 */
export function candidateObject(request: ReviewRequest, now: Date): SourceObject {
  const raw = slimmed(request.object as RawObject);
  const metadata = raw.metadata as Metadata;
  const fixed = {
    ...metadata,
    name: metadata.name || request.name,
    namespace: metadata.namespace ?? request.namespace,
    creationTimestamp: metadata.creationTimestamp ?? `${now.toISOString().slice(0, 19)}Z`,
  };
  return sourceObject({ ...raw, metadata: fixed } as RawObject);
}

/** `snapshot` with `candidate` in place of its old version (or added). */
export function withCandidate(snapshot: Snapshot, candidate: SourceObject): Snapshot {
  // Compared field by field: a key string for each of 22,000 objects was garbage of every review.
  const { kind, metadata } = candidate;
  const objects = snapshot.objects.filter((o) => o.metadata.name !== metadata.name || o.metadata.namespace !== metadata.namespace || o.kind !== kind);
  objects.push(candidate);
  return { objects };
}

/**
 * Codes that are warnings in `validate` but deny a candidate: under first-namespace-owns-host its claim
 * would be left out because another namespace owns the host (the message names the owner).
 */
const deniedWarnings = new Set(['host-owned-by-namespace']);

/**
 * Errors that only warn a candidate: a Service it names may simply not be created yet (`kubectl apply
 * -f dir/` goes in file order, not ours), and its paths answer 503 until it is; denying would make the
 * order of files matter.
 */
const warnedErrors = new Set(['backend-unresolved', 'backend-not-found', 'default-backend-unresolved']);

/**
 * The build's answer about `candidate`: its errors deny it, in `validate`'s words; its warnings go along,
 * and so do the warnings and errors of other resources that name it (a path it takes from another
 * tenant's Ingress is reported on that Ingress: the candidate learns whose).
 */
export function verdictOf(candidate: SourceObject, diagnostics: readonly Diagnostic[]): Verdict {
  const isAbout = (d: Diagnostic) =>
    d.resource !== undefined && d.resource.kind === candidate.kind && (d.resource.namespace ?? '') === candidate.metadata.namespace && d.resource.name === candidate.metadata.name;
  const about = diagnostics.filter(isAbout);
  const named = `${candidate.kind} ${candidate.metadata.namespace ? `${candidate.metadata.namespace}/` : ''}${candidate.metadata.name}`;
  const namesCandidate = (message: string) => message.split(named).slice(1).some((after) => !/^[-a-z0-9.]/.test(after));
  const onOthers = diagnostics.filter((d) => !isAbout(d) && d.severity !== 'info' && namesCandidate(d.message));
  const refuses = (d: Diagnostic) => (d.severity === 'error' && !warnedErrors.has(d.code)) || deniedWarnings.has(d.code);
  const refusing = about.filter(refuses);
  const warnings = [...lines(about.filter((d) => !refuses(d) && d.severity !== 'info')), ...lines(onOthers)];
  if (refusing.length === 0) return { allowed: true, warnings, why: 'allowed' };
  return { allowed: false, code: 400, message: lines(refusing).join('\n'), warnings, why: 'denied' };
}

function lines(diagnostics: readonly Diagnostic[]): string[] {
  return formatText(diagnostics).split('\n').filter((line) => line !== '');
}
