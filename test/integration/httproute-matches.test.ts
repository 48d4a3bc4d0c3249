import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CliRun } from '../support/cli.js';
import { echoBackendOf, httpGet, parseEcho, startHeaderBackend, startHttpBackend, startRecordingBackend, type Peer } from '../support/peers.js';
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
let backends: Record<'v1' | 'v2' | 'v3' | 'headers', Peer>;
let mirror: Awaited<ReturnType<typeof startRecordingBackend>>;

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
const requestHeaders = (modifier: Record<string, unknown>) => ({ type: 'RequestHeaderModifier', requestHeaderModifier: modifier });
const rewritePath = (type: string, value: string) => ({ type: 'URLRewrite', urlRewrite: { path: { type, [type === 'ReplaceFullPath' ? 'replaceFullPath' : 'replacePrefixMatch']: value } } });
const redirect = (spec: Record<string, unknown>) => ({ type: 'RequestRedirect', requestRedirect: spec });

beforeAll(async () => {
  backends = await settle({
    v1: startPeer(startHttpBackend('v1')),
    v2: startPeer(startHttpBackend('v2')),
    v3: startPeer(startHttpBackend('v3')),
    headers: startPeer(startHeaderBackend('headers')),
  });
  mirror = await startPeer(startRecordingBackend());
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
    ...(['v1', 'v2', 'v3', 'headers'] as const).map((name) => serviceManifest('apps', name, backends[name])),
    serviceManifest('apps', 'mirror', mirror),

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
    // HTTPRouteRequestHeaderModifier
    httpRoute('request-headers', ['request-headers.example.test'], [
      { matches: [prefix('/set')], filters: [requestHeaders({ set: [header('X-Header-Set', 'set-overwrites-values')] })], backendRefs: to('v1') },
      { matches: [prefix('/add')], filters: [requestHeaders({ add: [header('X-Header-Add', 'add-appends-values')] })], backendRefs: to('v1') },
      { matches: [prefix('/remove')], filters: [requestHeaders({ remove: ['X-Header-Remove'] })], backendRefs: to('v1') },
      {
        matches: [prefix('/multiple')],
        filters: [
          requestHeaders({
            set: [header('X-Header-Set-1', 'header-set-1'), header('X-Header-Set-2', 'header-set-2')],
            add: [header('X-Header-Add-1', 'header-add-1'), header('X-Header-Add-2', 'header-add-2'), header('X-Header-Add-3', 'header-add-3')],
            remove: ['X-Header-Remove-1', 'X-Header-Remove-2'],
          }),
        ],
        backendRefs: to('v1'),
      },
      // Per backendRef, with the rule's one backend.
      { matches: [prefix('/backend')], backendRefs: to('v2', { filters: [requestHeaders({ set: [header('X-Backend', 'v2 "quoted"; {x}')] })] }) },
    ]),
    // HTTPRouteResponseHeaderModifier, against a backend that sends X-Powered-By, X-Frame-Options and Set-Cookie.
    httpRoute('response-headers', ['response-headers.example.test'], [
      {
        filters: [
          {
            type: 'ResponseHeaderModifier',
            responseHeaderModifier: {
              set: [header('X-Frame-Options', 'DENY'), header('X-Header-Set', 'set-overwrites-values')],
              add: [header('X-Powered-By', 'gateway'), header('X-Header-Add', 'add-appends-values')],
              remove: ['Set-Cookie'],
            },
          },
        ],
        backendRefs: to('headers'),
      },
    ]),
    // HTTPRouteRewriteHost
    httpRoute('rewrite-host', ['rewrite-host.example.test'], [
      { matches: [prefix('/one')], filters: [{ type: 'URLRewrite', urlRewrite: { hostname: 'one.example.org' } }], backendRefs: to('v1') },
      { filters: [{ type: 'URLRewrite', urlRewrite: { hostname: 'example.org' } }], backendRefs: to('v2') },
      {
        matches: [prefix('/rewrite-host-and-modify-headers')],
        filters: [{ type: 'URLRewrite', urlRewrite: { hostname: 'test.example.org' } }, requestHeaders({ set: [header('X-Header-Set', 'set-overwrites-values')], remove: ['X-Header-Remove'] })],
        backendRefs: to('v2'),
      },
    ]),
    // HTTPRouteRewritePath
    httpRoute('rewrite-path', ['rewrite-path.example.test'], [
      { matches: [prefix('/prefix/one')], filters: [rewritePath('ReplacePrefixMatch', '/one')], backendRefs: to('v1') },
      { matches: [prefix('/strip-prefix')], filters: [rewritePath('ReplacePrefixMatch', '/')], backendRefs: to('v1') },
      { matches: [prefix('/full/one')], filters: [rewritePath('ReplaceFullPath', '/one')], backendRefs: to('v1') },
      {
        matches: [prefix('/full/rewrite-path-and-modify-headers')],
        filters: [rewritePath('ReplaceFullPath', '/test'), requestHeaders({ add: [header('X-Header-Add-Append', 'header-val-2')] })],
        backendRefs: to('v1'),
      },
      { matches: [prefix('/prefix/rewrite-path-and-modify-headers')], filters: [rewritePath('ReplacePrefixMatch', '/prefix')], backendRefs: to('v1') },
    ]),
    // HTTPRouteRedirectPath
    httpRoute('redirect-path', ['redirect-path.example.test'], [
      { matches: [prefix('/original-prefix')], filters: [redirect({ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/replacement-prefix' } })] },
      { matches: [prefix('/full')], filters: [redirect({ path: { type: 'ReplaceFullPath', replaceFullPath: '/full-path-replacement' } })] },
      { matches: [prefix('/path-and-host')], filters: [redirect({ hostname: 'example.org', path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/replacement-prefix' } })] },
      { matches: [prefix('/path-and-status')], filters: [redirect({ statusCode: 301, path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/replacement-prefix' } })] },
      { matches: [prefix('/full-path-and-host')], filters: [redirect({ hostname: 'example.org', path: { type: 'ReplaceFullPath', replaceFullPath: '/replacement-full' } })] },
      { matches: [prefix('/strip')], filters: [redirect({ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } })] },
    ]),
    // HTTPRouteRequestMirror
    httpRoute('mirror', ['mirror.example.test'], [
      { matches: [prefix('/mirror')], filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'mirror', port: mirror.port } } }], backendRefs: to('v1') },
      {
        matches: [prefix('/mirror-and-modify-headers')],
        filters: [requestHeaders({ set: [header('X-Header-Set', 'set-overwrites-values')] }), { type: 'RequestMirror', requestMirror: { backendRef: { name: 'mirror', port: mirror.port } } }],
        backendRefs: to('v1'),
      },
    ]),
  );
  rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller', '--format', 'json']);
  expect(rendered.stderr).not.toContain('internal error');
  expect(rendered.exitCode, rendered.stderr).toBe(0);
  await startTarget(target);
});

async function ask(host: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<string> {
  return echoBackendOf(await httpGet({ port: target.httpPort, host, path, headers, method }));
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
        ['/?Animal=whale'],
        ['/?animal=dolphin&animal=whale'],
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
      'GET /?Animal=whale': '404',
      'GET /?animal=dolphin&animal=whale': 'v2',
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
    expect(echoBackendOf(response)).toBe('v1');
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

/** The request as the backend saw it: its path, Host and the headers named. */
async function seen(host: string, path: string, headers: Record<string, string>, names: readonly string[]): Promise<Record<string, unknown>> {
  const response = await httpGet({ port: target.httpPort, host, path, headers });
  expect(response.status, `${host}${path}`).toBe(200);
  const echo = parseEcho(response.body);
  return { backend: echo.backend, path: echo.path, host: echo.headers.host, ...Object.fromEntries(names.map((n) => [n, echo.headers[n.toLowerCase()] ?? null])) };
}

describe('GATEWAY-HTTP filters, with real traffic', () => {
  it('HTTPRouteRequestHeaderModifier: set overwrites, add appends, remove removes, per rule and per backendRef', async () => {
    const host = 'request-headers.example.test';
    expect(await seen(host, '/set', { 'Some-Other-Header': 'val' }, ['Some-Other-Header', 'X-Header-Set'])).toMatchObject({ 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' });
    expect(await seen(host, '/set', { 'X-Header-Set': 'some-other-value' }, ['X-Header-Set'])).toMatchObject({ 'X-Header-Set': 'set-overwrites-values' });
    expect(await seen(host, '/add', {}, ['X-Header-Add'])).toMatchObject({ 'X-Header-Add': 'add-appends-values' });
    expect(await seen(host, '/add', { 'X-Header-Add': 'some-other-value' }, ['X-Header-Add'])).toMatchObject({ 'X-Header-Add': 'some-other-value,add-appends-values' });
    expect(await seen(host, '/remove', { 'X-Header-Remove': 'val' }, ['X-Header-Remove'])).toMatchObject({ 'X-Header-Remove': null });
    expect(
      await seen(
        host,
        '/multiple',
        { 'x-header-set-2': 'set-val-2', 'x-header-add-2': 'add-val-2', 'x-header-remove-2': 'remove-val-2', 'Another-Header': 'another-header-val' },
        ['X-Header-Set-1', 'X-Header-Set-2', 'X-Header-Add-1', 'X-Header-Add-2', 'X-Header-Add-3', 'Another-Header', 'X-Header-Remove-1', 'X-Header-Remove-2'],
      ),
    ).toMatchObject({
      'X-Header-Set-1': 'header-set-1',
      'X-Header-Set-2': 'header-set-2',
      'X-Header-Add-1': 'header-add-1',
      'X-Header-Add-2': 'add-val-2,header-add-2',
      'X-Header-Add-3': 'header-add-3',
      'Another-Header': 'another-header-val',
      'X-Header-Remove-1': null,
      'X-Header-Remove-2': null,
    });
    expect(await seen(host, '/backend', {}, ['X-Backend'])).toMatchObject({ backend: 'v2', 'X-Backend': 'v2 "quoted"; {x}' });
  });

  it('HTTPRouteResponseHeaderModifier: set overwrites the backend, add appends to it, remove removes it', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'response-headers.example.test', path: '/' });
    expect(response.status).toBe(200);
    expect({
      'x-frame-options': response.headers['x-frame-options'],
      'x-header-set': response.headers['x-header-set'],
      'x-powered-by': response.headers['x-powered-by'],
      'x-header-add': response.headers['x-header-add'],
      'set-cookie': response.headers['set-cookie'],
    }).toEqual({ 'x-frame-options': 'DENY', 'x-header-set': 'set-overwrites-values', 'x-powered-by': 'backend,gateway', 'x-header-add': 'add-appends-values', 'set-cookie': undefined });
  });

  it('HTTPRouteRewriteHost: the backend sees the rewritten Host, path unchanged', async () => {
    const host = 'rewrite-host.example.test';
    expect(await seen(host, '/one', {}, [])).toMatchObject({ backend: 'v1', path: '/one', host: 'one.example.org' });
    expect(await seen(host, '/two', {}, [])).toMatchObject({ backend: 'v2', path: '/two', host: 'example.org' });
    expect(await seen(host, '/rewrite-host-and-modify-headers', { 'X-Header-Remove': 'x' }, ['X-Header-Set', 'X-Header-Remove'])).toMatchObject({
      backend: 'v2',
      host: 'test.example.org',
      'X-Header-Set': 'set-overwrites-values',
      'X-Header-Remove': null,
    });
  });

  it('HTTPRouteRewritePath: prefixes replaced (or stripped) and full paths replaced, the query kept', async () => {
    const host = 'rewrite-path.example.test';
    const paths: Record<string, unknown> = {};
    for (const path of ['/prefix/one/two', '/prefix/one', '/strip-prefix/three', '/strip-prefix', '/full/one/two', '/full/one?x=1', '/full/rewrite-path-and-modify-headers/test', '/prefix/rewrite-path-and-modify-headers/one']) {
      paths[path] = (await seen(host, path, {}, [])).path;
    }
    expect(paths).toEqual({
      '/prefix/one/two': '/one/two',
      '/prefix/one': '/one',
      '/strip-prefix/three': '/three',
      '/strip-prefix': '/',
      '/full/one/two': '/one',
      '/full/one?x=1': '/one?x=1',
      '/full/rewrite-path-and-modify-headers/test': '/test',
      '/prefix/rewrite-path-and-modify-headers/one': '/prefix/one',
    });
    expect(await seen(host, '/full/rewrite-path-and-modify-headers', { 'X-Header-Add-Append': 'a' }, ['X-Header-Add-Append'])).toMatchObject({ 'X-Header-Add-Append': 'a,header-val-2' });
  });

  it('HTTPRouteRedirectPath: the prefix or the full path replaced, with host and status', async () => {
    const location = async (path: string) => {
      const response = await httpGet({ port: target.httpPort, host: 'redirect-path.example.test', path });
      return `${response.status} ${response.headers.location ?? ''}`;
    };
    const base = `http://redirect-path.example.test:${target.httpPort}`;
    const org = `http://example.org:${target.httpPort}`;
    expect(await location('/original-prefix/lemon')).toBe(`302 ${base}/replacement-prefix/lemon`);
    expect(await location('/original-prefix/lemon?q=1')).toBe(`302 ${base}/replacement-prefix/lemon?q=1`);
    expect(await location('/full/path/original')).toBe(`302 ${base}/full-path-replacement`);
    expect(await location('/path-and-host')).toBe(`302 ${org}/replacement-prefix`);
    expect(await location('/path-and-status')).toBe(`301 ${base}/replacement-prefix`);
    expect(await location('/full-path-and-host')).toBe(`302 ${org}/replacement-full`);
    expect(await location('/strip/a/b')).toBe(`302 ${base}/a/b`);
  });

  it('HTTPRouteRequestMirror: the backend answers, and the mirror gets a copy of the request, body and all', async () => {
    for (const path of ['/mirror', '/mirror-and-modify-headers']) {
      const copy = mirror.nextRequest();
      const response = await httpGet({ port: target.httpPort, host: 'mirror.example.test', path: `${path}?q=1`, method: 'POST', body: 'a=1', headers: { 'content-type': 'text/plain' } });
      expect(echoBackendOf(response)).toBe('v1');
      expect(await copy).toMatchObject({ method: 'POST', path: `${path}?q=1`, body: 'a=1' });
    }
  });
});
