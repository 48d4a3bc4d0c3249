import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../build/build.js';
import { formatText } from '../report/diagnostics-format.js';
import type { RawObject } from '../sources/cluster/reflector.js';
import { sourceObject } from '../sources/cluster/snapshot.js';
import type { Snapshot } from '../sources/snapshot.js';
import { admissionReview, refusedSnippet, testIngress, testService, unknownAnnotation } from '../../test/support/admission.js';
import type { JsonObject } from '../../test/support/fake-apiserver.js';
import { requireNginx } from '../../test/support/nginx.js';
import { testTranslateOptions } from '../../test/support/options.js';
import { writeGatedNginx } from '../../test/support/sidecar.js';
import { AdmissionReviewer, type AdmissionOptions } from './admission-server.js';
import { answerWithoutBuild, readReview } from './admission.js';
import { Logger } from './log.js';
import { Metrics } from './metrics.js';

const options = testTranslateOptions();

function snapshotOf(...objects: JsonObject[]): Snapshot {
  return { objects: objects.map((o) => sourceObject(o as unknown as RawObject)) };
}

function reviewer(snapshot: Snapshot | undefined, more: Partial<AdmissionOptions> = {}): AdmissionReviewer {
  return new AdmissionReviewer({
    snapshot: () => snapshot,
    translate: options,
    metrics: new Metrics({ ingressClass: 'nginx', watchedKinds: [] }),
    log: new Logger('json', () => undefined, 'error'),
    budgetMs: 60_000,
    maxWaiting: 8,
    ...more,
  });
}

interface Answered {
  status: number;
  response: { uid: string; allowed: boolean; status?: { code: number; message: string }; warnings?: string[] };
  text: string;
}

async function review(target: AdmissionReviewer, body: unknown, path = '/networking/v1/ingresses'): Promise<Answered> {
  const answer = await target.answer(path, typeof body === 'string' ? body : JSON.stringify(body));
  const parsed = answer.status === 200 ? (JSON.parse(answer.body) as { response: Answered['response'] }) : undefined;
  return { status: answer.status, response: parsed?.response as Answered['response'], text: answer.body };
}

/** What `validate` prints about the Ingress, without the file location a file input adds. */
function validateLines(snapshot: Snapshot, name: string, severity: 'error' | 'warning'): string[] {
  const about = build(snapshot, options).diagnostics.filter((d) => d.resource?.name === name && d.severity === severity);
  return formatText(about).split('\n').filter((line) => line !== '');
}

const cluster = snapshotOf(
  testService('team-a'),
  testService('team-b'),
  testIngress('team-a', 'home', 'a.example.com', { creationTimestamp: '2026-01-01T00:00:00Z' }),
  // Diagnostics about others are not the candidate's.
  testIngress('team-b', 'noisy', 'n.example.com', { annotations: { ...unknownAnnotation, ...refusedSnippet } }),
);

describe('admission reviews (the build\'s answer)', () => {
  it('denies a refused snippet with the lines validate prints, and echoes the uid', async () => {
    const candidate = testIngress('team-a', 'snip', 'snip.example.com', { annotations: refusedSnippet });
    const body = admissionReview(candidate);
    const answered = await review(reviewer(cluster), body);
    expect(answered.status).toBe(200);
    expect(answered.response.uid).toBe((body['request'] as { uid: string }).uid);
    expect(answered.response.allowed).toBe(false);
    const expected = validateLines(snapshotOf(...[testService('team-a'), candidate]), 'snip', 'error');
    expect(expected.some((line) => line.includes('[snippet-refused]'))).toBe(true);
    expect(answered.response.status?.message.split('\n')).toEqual(expected);
  });

  it('allows a valid Ingress and returns its warnings', async () => {
    const candidate = testIngress('team-a', 'warned', 'w.example.com', { annotations: unknownAnnotation });
    const answered = await review(reviewer(cluster), admissionReview(candidate));
    expect(answered.response.allowed).toBe(true);
    expect(answered.response.warnings).toEqual(validateLines(snapshotOf(testService('team-a'), candidate), 'warned', 'warning'));
    expect(answered.response.warnings?.join('\n')).toContain('[annotation-unknown]');
  });

  it('denies a host another namespace owns under first-namespace-owns-host, naming the owner; allows it without', async () => {
    const takeover = testIngress('team-b', 'takeover', 'a.example.com');
    const owned = await review(reviewer(cluster, { translate: { ...options, firstNamespaceOwnsHost: true } }), admissionReview(takeover));
    expect(owned.response.allowed).toBe(false);
    expect(owned.response.status?.message).toContain('belongs to namespace team-a (Ingress team-a/home claimed it first)');
    const shared = await review(reviewer(cluster), admissionReview(takeover));
    expect(shared.response.allowed).toBe(true);
  });

  it('allows at once: another class, DELETE, an update of status or unread metadata only', async () => {
    const target = reviewer(cluster);
    const otherClass = testIngress('team-a', 'other', 'o.example.com', { className: 'haproxy', annotations: refusedSnippet });
    expect((await review(target, admissionReview(otherClass))).response.allowed).toBe(true);
    const broken = testIngress('team-a', 'broken', 'b.example.com', { annotations: refusedSnippet });
    expect((await review(target, admissionReview(undefined, { operation: 'DELETE', oldObject: broken }))).response.allowed).toBe(true);
    const relabelled = { ...broken, metadata: { ...(broken['metadata'] as JsonObject), resourceVersion: '9', managedFields: [] }, status: { loadBalancer: { ingress: [{ ip: '10.0.0.9' }] } } };
    expect((await review(target, admissionReview(relabelled, { operation: 'UPDATE', oldObject: broken }))).response.allowed).toBe(true);
    // A change translate reads is built, and denied.
    const changed = testIngress('team-a', 'broken', 'c.example.com', { annotations: refusedSnippet });
    expect((await review(target, admissionReview(changed, { operation: 'UPDATE', oldObject: broken }))).response.allowed).toBe(false);
  });

  it('decides another class, DELETE and unread changes without a build', () => {
    const ingress = testIngress('team-a', 'other', 'o.example.com', { className: 'haproxy' });
    const request = (body: JsonObject) => readReview(body);
    expect(answerWithoutBuild('/networking/v1/ingresses', request(admissionReview(ingress)), cluster, options)?.why).toBe('not-ours');
    expect(answerWithoutBuild('/networking/v1/ingresses', request(admissionReview(testIngress('team-a', 'mine', 'm.example.com'))), cluster, options)).toBeUndefined();
    const gateway = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'g', namespace: 'team-a' }, spec: { gatewayClassName: 'someone-else', listeners: [] } };
    const gatewayKind = { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' };
    expect(answerWithoutBuild('/gateway.networking.k8s.io/gateways', request(admissionReview(gateway, { kind: gatewayKind })), cluster, options)?.why).toBe('not-ours');
    const route = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'team-a' }, spec: { parentRefs: [{ name: 'g' }] } };
    const routeKind = { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute' };
    expect(answerWithoutBuild('/gateway.networking.k8s.io/httproutes', request(admissionReview(route, { kind: routeKind })), cluster, options)?.why).toBe('not-ours');
    const ours = snapshotOf({ ...gateway, spec: { gatewayClassName: options.gatewayClass, listeners: [] } });
    expect(answerWithoutBuild('/gateway.networking.k8s.io/httproutes', request(admissionReview(route, { kind: routeKind })), ours, options)).toBeUndefined();
  });

  it('says whose path a candidate takes: the other tenant\'s diagnostics that name it come as warnings', async () => {
    const home = testIngress('team-a', 'home', 'a.example.com', { creationTimestamp: '2026-01-01T00:00:00Z' });
    const young = testIngress('team-b', 'young', 'y.example.com', { creationTimestamp: '2026-02-01T00:00:00Z' });
    const taking = testIngress('team-a', 'home', 'y.example.com', { creationTimestamp: '2026-01-01T00:00:00Z' });
    const answered = await review(reviewer(snapshotOf(testService('team-a'), testService('team-b'), home, young)), admissionReview(taking, { operation: 'UPDATE', oldObject: home }));
    expect(answered.response.allowed).toBe(true);
    expect(answered.response.warnings?.some((w) => w.includes('Ingress team-b/young') && w.includes('Ingress team-a/home'))).toBe(true);
  });

  it('answers a dry-run review the same way', async () => {
    const candidate = testIngress('team-a', 'snip', 'snip.example.com', { annotations: refusedSnippet });
    const wet = await review(reviewer(cluster), admissionReview(candidate));
    const dry = await review(reviewer(cluster), admissionReview(candidate, { dryRun: true }));
    expect(dry.response.allowed).toBe(false);
    expect(dry.response.status).toEqual(wet.response.status);
  });
});

describe('Gateway API reviews', () => {
  const gatewayApi = 'gateway.networking.k8s.io/v1';
  const routeKind = { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute' };
  const withGateway = snapshotOf(
    testService('team-a'),
    { apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: options.gatewayClass }, spec: { controllerName: 'ingress2nginx.dev/controller' } },
    { apiVersion: gatewayApi, kind: 'Gateway', metadata: { name: 'gw', namespace: 'team-a', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { gatewayClassName: options.gatewayClass, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] } },
  );
  const route = (hostname: string): JsonObject => ({
    apiVersion: gatewayApi,
    kind: 'HTTPRoute',
    metadata: { name: 'route', namespace: 'team-a' },
    spec: { parentRefs: [{ name: 'gw' }], hostnames: [hostname], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
  });

  it('denies an HTTPRoute with an error in validate\'s words, and allows a valid one', async () => {
    const target = reviewer(withGateway);
    const path = '/gateway.networking.k8s.io/httproutes';
    const bad = await review(target, admissionReview(route('bad_host!.example.com'), { kind: routeKind }), path);
    expect(bad.response.allowed).toBe(false);
    expect(bad.response.status?.message).toContain('error [hostname-invalid] HTTPRoute team-a/route spec.hostnames[0]');
    const good = await review(target, admissionReview(route('good.example.com'), { kind: routeKind }), path);
    expect(good.response.allowed).toBe(true);
  });

  it('denies a GRPCRoute the CRD would refuse, in validate\'s words, and allows a valid one', async () => {
    // For an nginx that takes cleartext HTTP/2 beside HTTP/1.x: the Gateway's listener is HTTP.
    const target = reviewer(withGateway, { translate: { ...options, nginxVersion: '1.28.2' } });
    const path = '/gateway.networking.k8s.io/grpcroutes';
    const grpcKind = { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'GRPCRoute' };
    const grpcRoute = (service: string): JsonObject => ({
      apiVersion: gatewayApi,
      kind: 'GRPCRoute',
      metadata: { name: 'grpc', namespace: 'team-a' },
      spec: { parentRefs: [{ name: 'gw' }], hostnames: ['grpc.example.com'], rules: [{ matches: [{ method: { service } }], backendRefs: [{ name: 'web', port: 80 }] }] },
    });
    const bad = await review(target, admissionReview(grpcRoute('echo/v1'), { kind: grpcKind }), path);
    expect(bad.response.allowed).toBe(false);
    expect(bad.response.status?.message).toContain('GRPCRoute team-a/grpc');
    const good = await review(target, admissionReview(grpcRoute('echo.v1.Echo'), { kind: grpcKind }), path);
    expect(good.response.allowed).toBe(true);
  });
});

describe('--validating-webhook-nginx-check', () => {
  it('allows what nginx -t accepts and denies, in nginx\'s words, what it refuses', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'i2n-admission-nginx-'));
    try {
      const installed = requireNginx();
      const nginx = await writeGatedNginx(dir, installed.binary);
      const translate = { ...options, runDir: join(dir, 'run'), nginxVersion: installed.version, ...(installed.streamModuleFile !== undefined && { streamModulePath: installed.streamModuleFile }) };
      const target = reviewer(cluster, { nginxCheck: nginx.binary, translate });
      const candidate = admissionReview(testIngress('team-a', 'checked', 'checked.example.com'));
      const accepted = await review(target, candidate);
      expect(accepted.response.status?.message).toBeUndefined();
      expect(accepted.response.allowed).toBe(true);
      await nginx.refuseAll();
      const refused = await review(target, candidate);
      expect(refused.response.allowed).toBe(false);
      expect(refused.response.status?.message).toContain('nginx -t refuses the config with this object');
      expect(refused.response.status?.message).toContain('i2n_test_gate_refuses_every_config');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('hostile and unexpected reviews', () => {
  it('answers malformed JSON, a non-v1 review and an unknown path with 4xx', async () => {
    const target = reviewer(cluster);
    expect((await review(target, '{"apiVersion": "admission.k8s.io/v1", ')).status).toBe(400);
    expect((await review(target, { ...admissionReview(testIngress('a', 'b', 'c.example.com')), apiVersion: 'admission.k8s.io/v1beta1' })).status).toBe(400);
    expect((await review(target, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'x' } })).status).toBe(400);
    expect((await review(target, admissionReview(testIngress('a', 'b', 'c.example.com')), '/networking/v1/services')).status).toBe(404);
  });

  it('denies a kind or version its path does not review', async () => {
    const target = reviewer(cluster);
    const wrongKind = await review(target, admissionReview(testService('team-a'), { kind: { group: '', version: 'v1', kind: 'Service' } }));
    expect(wrongKind.status).toBe(200);
    expect(wrongKind.response.allowed).toBe(false);
    expect(wrongKind.response.status?.message).toContain('not Service');
    const wrongVersion = await review(target, admissionReview(testIngress('a', 'b', 'c.example.com'), { kind: { group: 'networking.k8s.io', version: 'v1beta1', kind: 'Ingress' } }));
    expect(wrongVersion.response.allowed).toBe(false);
  });

  it('denies, never throws, for an object too deep to compare or build', async () => {
    const object = { ...testIngress('team-a', 'deep', 'deep.example.com'), spec: { rules: 'DEEP' } };
    const deep = `${'['.repeat(50_000)}"x"${']'.repeat(50_000)}`;
    const target = reviewer(cluster);
    const answered = await review(target, JSON.stringify(admissionReview(object, { operation: 'UPDATE', oldObject: object })).replaceAll('"DEEP"', deep));
    expect(answered.status).toBe(200);
    expect(answered.response.allowed).toBe(false);
    // And the next review is answered as usual.
    expect((await review(target, admissionReview(testIngress('team-a', 'after', 'after.example.com')))).response.allowed).toBe(true);
  });

  it('denies until the watches have synced', async () => {
    const answered = await review(reviewer(undefined), admissionReview(testIngress('team-a', 'x', 'x.example.com')));
    expect(answered.response.allowed).toBe(false);
    expect(answered.response.status?.code).toBe(503);
  });

  it('denies a review that waited past the budget instead of building it', async () => {
    const target = reviewer(cluster, { budgetMs: -1 });
    const answered = await review(target, admissionReview(testIngress('team-a', 'x', 'x.example.com')));
    expect(answered.response.allowed).toBe(false);
    expect(answered.response.status?.message).toContain('busy');
  });
});
