import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CliRun } from '../support/cli.js';
import { httpGet, parseEcho, startHttpBackend, type HttpResponse, type Peer } from '../support/peers.js';
import { cleanUp, configMapManifest, createTarget, documents, renderInto, serviceManifest, settle, startPeer, startTarget, type Target } from './harness.js';

/**
 * Real HTTP traffic through a real nginx for HTTPRoute matches beyond the path (headers, query
 * parameters, method, RegularExpression paths) and for filters: one test per scenario of the upstream
 * Gateway API conformance suite's GATEWAY-HTTP profile, written from the scenario's intent (its requests
 * and expected answers) with our own manifests. Each scenario has host names of its own on one nginx.
 */

afterAll(cleanUp);

const gatewayApi = 'gateway.networking.k8s.io/v1';

let target: Target;
let rendered: CliRun;
let backends: Record<'v1' | 'v2' | 'v3', Peer>;

interface Rule {
  readonly matches?: readonly Record<string, unknown>[];
  readonly filters?: readonly Record<string, unknown>[];
  readonly backendRefs?: readonly Record<string, unknown>[];
}

function httpRoute(name: string, hostnames: readonly string[], rules: readonly Rule[]): string {
  return stringify({
    apiVersion: gatewayApi,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'apps' },
    spec: { parentRefs: [{ name: 'edge', namespace: 'infra' }], hostnames, rules },
  });
}

const to = (name: keyof typeof backends, more: Record<string, unknown> = {}) => [{ name, port: backends[name].port, ...more }];
const prefix = (value: string) => ({ path: { type: 'PathPrefix', value } });
const header = (name: string, value: string) => ({ name, value });

beforeAll(async () => {
  backends = await settle({ v1: startPeer(startHttpBackend('v1')), v2: startPeer(startHttpBackend('v2')), v3: startPeer(startHttpBackend('v3')) });
  target = await createTarget();
  const manifests = documents(
    configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1' }),
    stringify({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } }),
    stringify({
      apiVersion: gatewayApi,
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: 'infra' },
      spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'http', port: target.httpPort, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] },
    }),
    ...(['v1', 'v2', 'v3'] as const).map((name) => serviceManifest('apps', name, backends[name])),

    // HTTPRouteHeaderMatching
    httpRoute('headers', ['headers.example.test'], [
      { matches: [{ headers: [header('version', 'one')] }], backendRefs: to('v1') },
      { matches: [{ headers: [header('version', 'two')] }], backendRefs: to('v2') },
      { matches: [{ headers: [header('version', 'two'), header('color', 'orange')] }], backendRefs: to('v1') },
      { matches: [{ headers: [header('color', 'blue')] }, { headers: [header('color', 'green')] }], backendRefs: to('v1') },
      { matches: [{ headers: [header('color', 'red')] }, { headers: [header('color', 'yellow')] }], backendRefs: to('v2') },
    ]),
    // HTTPRouteQueryParamMatching
    httpRoute('query', ['query.example.test'], [
      { matches: [{ queryParams: [header('animal', 'whale')] }], backendRefs: to('v1') },
      { matches: [{ queryParams: [header('animal', 'dolphin')] }], backendRefs: to('v2') },
      { matches: [{ queryParams: [header('animal', 'dolphin'), header('color', 'blue')] }, { queryParams: [header('ANIMAL', 'Whale')] }], backendRefs: to('v3') },
      { matches: [{ ...prefix('/path1'), queryParams: [header('animal', 'whale')] }], backendRefs: to('v1') },
      { matches: [{ headers: [header('version', 'one')], queryParams: [header('animal', 'whale')] }], backendRefs: to('v2') },
      { matches: [{ ...prefix('/path2'), headers: [header('version', 'two')], queryParams: [header('animal', 'whale')] }], backendRefs: to('v3') },
      {
        matches: [
          { ...prefix('/path3'), queryParams: [header('animal', 'shark')] },
          { ...prefix('/path4'), headers: [header('version', 'three')], queryParams: [header('animal', 'kraken')] },
        ],
        backendRefs: to('v1'),
      },
      { matches: [prefix('/path5')], backendRefs: to('v1') },
      { matches: [{ queryParams: [header('animal', 'hydra')] }], backendRefs: to('v2') },
      { matches: [{ headers: [header('version', 'four')] }], backendRefs: to('v3') },
    ]),
    // HTTPRouteMethodMatching
    httpRoute('methods', ['methods.example.test'], [
      { matches: [{ method: 'POST' }], backendRefs: to('v1') },
      { matches: [{ method: 'GET' }], backendRefs: to('v2') },
      { matches: [{ ...prefix('/path1'), method: 'GET' }], backendRefs: to('v1') },
      { matches: [{ headers: [header('version', 'one')], method: 'PUT' }], backendRefs: to('v2') },
      { matches: [{ ...prefix('/path2'), headers: [header('version', 'two')], method: 'POST' }], backendRefs: to('v3') },
      {
        matches: [
          { ...prefix('/path3'), method: 'PATCH' },
          { ...prefix('/path4'), headers: [header('version', 'three')], method: 'DELETE' },
        ],
        backendRefs: to('v1'),
      },
      { matches: [prefix('/path5')], backendRefs: to('v1') },
      { matches: [{ method: 'PATCH' }], backendRefs: to('v2') },
      { matches: [{ headers: [header('version', 'four')] }], backendRefs: to('v3') },
    ]),
    // HTTPRouteMatchingAcrossRoutes, with header matches: two routes, one host in common.
    httpRoute('across-one', ['across.example.test', 'across.example.net'], [{ matches: [prefix('/'), { headers: [header('version', 'one')] }], backendRefs: to('v1') }]),
    httpRoute('across-two', ['across.example.test'], [{ matches: [prefix('/v2'), { headers: [header('version', 'two')] }], backendRefs: to('v2') }]),
    // RegularExpression paths: before prefixes, after Exact; a request that meets none falls through.
    httpRoute('regex', ['regex.example.test'], [
      { matches: [{ path: { type: 'RegularExpression', value: '/items/[0-9]+' } }], backendRefs: to('v1') },
      { matches: [{ path: { type: 'Exact', value: '/items/7' } }], backendRefs: to('v2') },
      { matches: [prefix('/items')], backendRefs: to('v3') },
    ]),
  );
  rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller', '--format', 'json']);
  expect(rendered.stderr).not.toContain('internal error');
  expect(rendered.exitCode, rendered.stderr).toBe(0);
  await startTarget(target);
});

/** Which echo backend answered, or the status when none did. */
function who(response: HttpResponse): string {
  if (response.status !== 200 || response.body === '') return String(response.status);
  return parseEcho(response.body).backend;
}

async function ask(host: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<string> {
  return who(await httpGet({ port: target.httpPort, host, path, headers, method }));
}

/** Answers to `requests` (`[path, headers?, method?]`), keyed `METHOD path headers`. */
async function answers(host: string, requests: readonly [string, Record<string, string>?, string?][]): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const [path, headers = {}, method = 'GET'] of requests) {
    const key = `${method} ${path}${Object.entries(headers).map(([k, v]) => ` ${k}=${v}`).join('')}`;
    result[key] = await ask(host, path, headers, method);
  }
  return result;
}

describe('GATEWAY-HTTP matches, with real traffic', () => {
  it('HTTPRouteHeaderMatching: exact header values, ANDed within a match, ORed across matches', async () => {
    expect(
      await answers('headers.example.test', [
        ['/', { Version: 'one' }],
        ['/', { Version: 'two' }],
        ['/', { Version: 'two', Color: 'orange' }],
        ['/', { Version: 'two', Color: 'blue' }],
        ['/', { Color: 'orange' }],
        ['/', { 'Some-Other-Header': 'one' }],
        ['/', { Color: 'blue' }],
        ['/', { Color: 'green' }],
        ['/', { Color: 'red' }],
        ['/', { Color: 'yellow' }],
        ['/', { Color: 'purple' }],
      ]),
    ).toEqual({
      'GET / Version=one': 'v1',
      'GET / Version=two': 'v2',
      'GET / Version=two Color=orange': 'v1',
      'GET / Version=two Color=blue': 'v2',
      'GET / Color=orange': '404',
      'GET / Some-Other-Header=one': '404',
      'GET / Color=blue': 'v1',
      'GET / Color=green': 'v1',
      'GET / Color=red': 'v2',
      'GET / Color=yellow': 'v2',
      'GET / Color=purple': '404',
    });
  });

  it('HTTPRouteQueryParamMatching: exact, case-sensitive names and values; with paths and headers; precedence', async () => {
    expect(
      await answers('query.example.test', [
        ['/?animal=whale'],
        ['/?animal=dolphin'],
        ['/?animal=dolphin&color=blue'],
        ['/?ANIMAL=Whale'],
        ['/?animal=whale&otherparam=irrelevant'],
        ['/?animal=dolphin&color=yellow'],
        ['/?color=blue'],
        ['/?animal=dog'],
        ['/?animal=whaledolphin'],
        ['/'],
        ['/path1?animal=whale'],
        ['/?animal=whale', { version: 'one' }],
        ['/path2?animal=whale', { version: 'two' }],
        ['/path3?animal=shark'],
        ['/path4?animal=kraken', { version: 'three' }],
        ['/?animal=shark'],
        ['/path4?animal=kraken'],
        ['/path5?animal=hydra'],
        ['/?animal=hydra', { version: 'four' }],
      ]),
    ).toEqual({
      'GET /?animal=whale': 'v1',
      'GET /?animal=dolphin': 'v2',
      'GET /?animal=dolphin&color=blue': 'v3',
      'GET /?ANIMAL=Whale': 'v3',
      'GET /?animal=whale&otherparam=irrelevant': 'v1',
      'GET /?animal=dolphin&color=yellow': 'v2',
      'GET /?color=blue': '404',
      'GET /?animal=dog': '404',
      'GET /?animal=whaledolphin': '404',
      'GET /': '404',
      'GET /path1?animal=whale': 'v1',
      'GET /?animal=whale version=one': 'v2',
      'GET /path2?animal=whale version=two': 'v3',
      'GET /path3?animal=shark': 'v1',
      'GET /path4?animal=kraken version=three': 'v1',
      'GET /?animal=shark': '404',
      'GET /path4?animal=kraken': '404',
      'GET /path5?animal=hydra': 'v1',
      'GET /?animal=hydra version=four': 'v3',
    });
  });

  it('HTTPRouteMethodMatching: methods, with paths and headers; precedence', async () => {
    expect(
      await answers('methods.example.test', [
        ['/', {}, 'POST'],
        ['/', {}, 'GET'],
        ['/', {}, 'HEAD'],
        ['/path1', {}, 'GET'],
        ['/', { version: 'one' }, 'PUT'],
        ['/path2', { version: 'two' }, 'POST'],
        ['/path3', {}, 'PATCH'],
        ['/path4', { version: 'three' }, 'DELETE'],
        ['/', {}, 'PUT'],
        ['/path4', {}, 'DELETE'],
        ['/path5', {}, 'PATCH'],
        ['/', { version: 'four' }, 'PATCH'],
      ]),
    ).toEqual({
      'POST /': 'v1',
      'GET /': 'v2',
      'HEAD /': '404',
      'GET /path1': 'v1',
      'PUT / version=one': 'v2',
      'POST /path2 version=two': 'v3',
      'PATCH /path3': 'v1',
      'DELETE /path4 version=three': 'v1',
      'PUT /': '404',
      'DELETE /path4': '404',
      'PATCH /path5': 'v1',
      'PATCH / version=four': 'v2',
    });
  });

  it('a request body reaches the backend through a match', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'methods.example.test', path: '/', method: 'POST', body: 'a=1', headers: { 'content-type': 'text/plain' } });
    expect(who(response)).toBe('v1');
    expect(parseEcho(response.body).headers['content-length']).toBe('3');
  });

  it('HTTPRouteMatchingAcrossRoutes: header matches and paths of two routes on one host', async () => {
    expect(
      await answers('across.example.test', [['/'], ['/example'], ['/example', { Version: 'one' }], ['/v2'], ['/v2/example'], ['/', { Version: 'two' }]]),
    ).toEqual({
      'GET /': 'v1',
      'GET /example': 'v1',
      'GET /example Version=one': 'v1',
      'GET /v2': 'v2',
      'GET /v2/example': 'v2',
      'GET / Version=two': 'v2',
    });
    expect(await answers('across.example.net', [['/example'], ['/v2']])).toEqual({ 'GET /example': 'v1', 'GET /v2': 'v1' });
  });

  it('RegularExpression paths: after Exact, before PathPrefix, matching the whole path', async () => {
    expect(await answers('regex.example.test', [['/items/42'], ['/items/7'], ['/items/abc'], ['/items/42/more'], ['/other']])).toEqual({
      'GET /items/42': 'v1',
      'GET /items/7': 'v2',
      'GET /items/abc': 'v3',
      'GET /items/42/more': 'v3',
      'GET /other': '404',
    });
  });
});
