#!/usr/bin/env node
// Re-runs the status half of the upstream Gateway API conformance suite offline, against `render`:
// for each test of conformance/tests/ in a gateway-api checkout, it renders the suite's base manifests
// with the test's own, and compares the statuses of `render --format json` with what the test's source
// expects. Nothing of the checkout is copied; it is read where the user keeps it.
//
//   npm run build && node scripts/conformance-offline.mjs PATH-TO-GATEWAY-API-CHECKOUT [--all] [--json] [--nginx-version=V] [--per-gateway]
//
// `--nginx-version` renders for that nginx (default: render's); GRPCRoutes on the suite's HTTP listeners
// need 1.25.1 or later (cleartext HTTP/2 beside HTTP/1.x).
// By default every Gateway shares one data plane and the ports --http-port/--https-port give (80, 443).
// With --per-gateway each Gateway is rendered as a data plane of its own (`render --gateway NS/NAME`),
// as the suite runs them (each Gateway an address of its own): its status comes from its own data
// plane, and a route's parents and a policy's ancestors are those every data plane wrote.
//
// What a test expects is read from its Go source, as far as that is plain: the features it needs, the
// conditions it asks for (`metav1.Condition{Type, Status, Reason}`), and whether it waits for its
// Gateways and Routes to be accepted (`…MustBeAccepted`). Then:
// - every Gateway of the test (its own manifests, and the base Gateways it names) that the suite waits
//   for is Accepted and Programmed, unless the test expects a Gateway or listener condition to be False;
// - when the test waits for its routes, every route of its manifests is Accepted on each of our parents,
//   unless it expects a route to be refused;
// - every condition the test asks for is on some object of its kind (route parent, Gateway, listener,
//   policy ancestor) of the test;
// - where the test waits for its namespaces (NamespacesMustBeReady), and for the suite's setup, every
//   Gateway there that is not marked to be skipped is Programmed.
// Traffic is not sent (the suite's backends are Deployments); the traffic tests of the project do that.
// Secrets the suite creates at run time are not in the manifests: render takes them for Secrets the
// cluster provides (a stand-in certificate), so listeners that name them are programmed.
// Tests that need a feature outside the GATEWAY-HTTP, GATEWAY-TLS and GATEWAY-GRPC profiles' Gateway,
// HTTPRoute, TLSRoute, GRPCRoute, ReferenceGrant and BackendTLSPolicy are listed as n/a (with --all: rendered all the same).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const checkout = args.find((a) => !a.startsWith('--'));
if (!checkout) {
  process.stderr.write('usage: node scripts/conformance-offline.mjs PATH-TO-GATEWAY-API-CHECKOUT [--all] [--json] [--nginx-version=V]\n');
  process.exit(2);
}
const renderAll = args.includes('--all');
const asJson = args.includes('--json');
const nginxVersion = args.find((a) => a.startsWith('--nginx-version='))?.slice('--nginx-version='.length);
const perGateway = args.includes('--per-gateway');
const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'ingress2nginx');
const gatewayClass = 'ingress2nginx';

/** Features whose tests are in scope: the core of GATEWAY-HTTP/GATEWAY-TLS and the extended ones built. */
const builtFeatures = new Set([
  'Gateway',
  'HTTPRoute',
  'TLSRoute',
  'ReferenceGrant',
  'BackendTLSPolicy',
  'HTTPRouteSchemeRedirect',
  'HTTPRoute303RedirectStatusCode',
  'HTTPRoute307RedirectStatusCode',
  'HTTPRoute308RedirectStatusCode',
  'TLSRouteModeTerminate',
  'TLSRouteModeMixed',
  'HTTPRoutePortRedirect',
  'HTTPRouteRequestTimeout',
  'HTTPRouteBackendTimeout',
  'HTTPRouteParentRefPort',
  'GRPCRoute',
  'GRPCRouteNamedRouteRule',
  'GRPCRouteRequestHeaderModifier',
  'GatewayPort8080',
  'HTTPRouteDestinationPortMatching',
]);
/** Families of tests listed at all (the others are other route kinds). */
const families = /^(Gateway|HTTPRoute|TLSRoute|GRPC|BackendTLSPolicy)/;

const testsDir = path.join(checkout, 'conformance', 'tests');
const base = readFileSync(path.join(checkout, 'conformance', 'base', 'manifests.yaml'), 'utf8');
const substitute = (text) => text.replaceAll('{GATEWAY_CLASS_NAME}', gatewayClass);

// ------------------------------------------------------------------------------ the tests' sources

/** Each `suite.ConformanceTest{…}` of a Go file: short name, features, manifests, and its body. */
function testsOf(source) {
  const tests = [];
  const starts = [...source.matchAll(/ShortName:\s*"([^"]+)"/g)];
  starts.forEach((match, index) => {
    const body = source.slice(match.index, starts[index + 1]?.index ?? source.length);
    const features = [...new Set([...body.matchAll(/features\.Support([A-Za-z0-9]+)/g)].map((m) => m[1]))];
    const manifests = [...(/Manifests:\s*\[\]string\{([^}]*)\}/.exec(body)?.[1] ?? '').matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    tests.push({ name: match[1], features, manifests, body });
  });
  return tests;
}

/** `string(v1.RouteConditionAccepted)` → { scope: 'route', value: 'Accepted' }; `"Accepted"` → any scope. */
function constant(text, kind) {
  const literal = /^"(.*)"$/.exec(text.trim());
  if (literal) return { scope: 'any', value: literal[1] };
  const named = new RegExp(`(Route|Gateway|Listener|Policy|BackendTLSPolicy)${kind}([A-Za-z]+)`).exec(text);
  if (!named) return undefined;
  const scope = { Route: 'route', Gateway: 'gateway', Listener: 'listener', Policy: 'policy', BackendTLSPolicy: 'policy' }[named[1]];
  return { scope, value: named[2] };
}

/** The conditions a test asks for: type, status and (unless "any reason") reason, with the object kind. */
function expectedConditions(body) {
  const expected = [];
  for (const block of body.matchAll(/\{\s*(Type:[^{}]*)\}/g)) {
    const field = (name) => new RegExp(`${name}:\\s*([^,\\n]+)`).exec(block[1])?.[1];
    const type = field('Type') && constant(field('Type'), 'Condition');
    const status = /Condition(True|False|Unknown)/.exec(field('Status') ?? '')?.[1];
    if (!type || !status) continue;
    const reasonText = field('Reason');
    const reason = reasonText && reasonText.trim() !== '""' ? constant(reasonText, 'Reason') : undefined;
    expected.push({ scope: type.scope === 'any' ? (reason?.scope ?? 'any') : type.scope, type: type.value, status, ...(reason && { reason: reason.value }) });
  }
  const seen = new Set();
  return expected.filter((e) => {
    const id = JSON.stringify(e);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

// ------------------------------------------------------------------------------ manifests, rendering

/** Kind, namespace, name and a few fields of each document, without a YAML parser (simple manifests). */
function objectsOf(yaml) {
  return yaml
    .split(/^---\s*$/m)
    .map((doc) => {
      const kind = /^kind:\s*(\S+)/m.exec(doc)?.[1];
      const name = /^metadata:\s*\n(?:\s+.*\n)*?\s+name:\s*"?([^"\s]+)"?/m.exec(doc)?.[1];
      const namespace = /^metadata:\s*\n(?:\s+.*\n)*?\s+namespace:\s*"?([^"\s]+)"?/m.exec(doc)?.[1] ?? 'default';
      return kind && name ? { kind, name, namespace, skipReadiness: doc.includes('gateway-api/skip-this-for-readiness') } : undefined;
    })
    .filter((o) => o !== undefined);
}

function render(manifests, extraArgs = []) {
  const dir = mkdtempSync(path.join(tmpdir(), 'i2n-conformance-'));
  try {
    mkdirSync(path.join(dir, 'in'));
    writeFileSync(path.join(dir, 'in', 'base.yaml'), substitute(base));
    manifests.forEach((text, index) => writeFileSync(path.join(dir, 'in', `test-${index}.yaml`), substitute(text)));
    const run = spawnSync(process.execPath, [bin, 'render', '-f', path.join(dir, 'in'), '-o', path.join(dir, 'out'), '--gateway-class', gatewayClass, '--format', 'json', ...(nginxVersion ? ['--nginx-version', nginxVersion] : []), ...extraArgs], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.status === 2 || run.stdout === '') return { error: run.stderr.trim().split('\n').slice(-1)[0] ?? `exit ${run.status}` };
    return { report: JSON.parse(run.stdout) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * With --per-gateway: each Gateway of `gateways` rendered on its own, the statuses put together as the
 * data planes would write them (a Gateway's from its own; routes' parents and policies' ancestors from all).
 */
function renderPerGateway(manifests, gateways) {
  const status = {};
  const entries = { parents: 'parentRef', ancestors: 'ancestorRef' };
  for (const gateway of gateways) {
    const id = `Gateway/${gateway.namespace}/${gateway.name}`;
    const rendered = render(manifests, ['--gateway', `${gateway.namespace}/${gateway.name}`]);
    if (rendered.error) return rendered;
    for (const [key, value] of Object.entries(rendered.report.status ?? {})) {
      if (key.startsWith('Gateway/')) {
        if (key === id) status[key] = value;
        continue;
      }
      const merged = (status[key] ??= { ...value, parents: undefined, ancestors: undefined });
      for (const [list, ref] of Object.entries(entries)) {
        for (const entry of value[list] ?? []) {
          if (!(merged[list] ??= []).some((known) => JSON.stringify(known[ref]) === JSON.stringify(entry[ref]))) merged[list].push(entry);
        }
      }
    }
  }
  return { report: { status } };
}

/** The suite's base manifests and a test's, rendered in the mode asked for. */
function renderTest(manifests) {
  if (!perGateway) return render(manifests);
  const gateways = [...objectsOf(base), ...objectsOf(manifests.join('\n---\n'))].filter((o) => o.kind === 'Gateway');
  return renderPerGateway(manifests, gateways);
}

// ------------------------------------------------------------------------------ verdicts

const conditionText = (c) => `${c.type}=${c.status}${c.reason ? `/${c.reason}` : ''}`;
const matches = (want) => (c) => c.type === want.type && c.status === want.status && (want.reason === undefined || c.reason === want.reason);

/** What the suite's NamespacesMustBeReady waits for: every Gateway not marked to be skipped is Programmed. */
function readiness(report, objects) {
  return objects
    .filter((o) => o.kind === 'Gateway' && !o.skipReadiness)
    .filter((o) => !(report.status?.[`Gateway/${o.namespace}/${o.name}`]?.conditions ?? []).some((c) => c.type === 'Programmed' && c.status === 'True'))
    .map((o) => `namespace not ready: Gateway ${o.name} is not Programmed`);
}

function judge(test, report, testObjects) {
  const problems = [];
  // The GatewayClass scenarios bump a class's generation: only the cluster mode sees one
  // (test/integration/sidecar-gatewayclass.test.ts runs it).
  if (test.name.startsWith('GatewayClass')) problems.push('a generation bump needs the cluster mode; render has no generation to follow');
  const status = report.status ?? {};
  const named = new Set([...test.body.matchAll(/Name:\s*"([^"]+)"/g)].map((m) => m[1]));
  const baseGateways = objectsOf(base).filter((o) => o.kind === 'Gateway' && named.has(o.name));
  const gateways = [...testObjects.filter((o) => o.kind === 'Gateway'), ...baseGateways];
  const routes = testObjects.filter((o) => o.kind === 'HTTPRoute' || o.kind === 'TLSRoute' || o.kind === 'GRPCRoute');
  const policies = testObjects.filter((o) => o.kind === 'BackendTLSPolicy');
  const expected = expectedConditions(test.body);
  const waitsForAcceptance = /MustBeAccepted\(/.test(test.body);

  const gatewayFalse = expected.some((e) => (e.scope === 'gateway' || e.scope === 'listener') && e.status === 'False');
  if (!gatewayFalse) {
    for (const gateway of gateways.filter((g) => !g.skipReadiness)) {
      const conditions = status[`Gateway/${gateway.namespace}/${gateway.name}`]?.conditions ?? [];
      for (const type of ['Accepted', 'Programmed']) {
        if (!conditions.some((c) => c.type === type && c.status === 'True')) problems.push(`Gateway ${gateway.name} not ${type} (${conditions.map(conditionText).join(', ') || 'no status'})`);
      }
    }
  }
  const routeRefused = expected.some((e) => e.scope === 'route' && e.type === 'Accepted' && e.status === 'False');
  if (waitsForAcceptance && !routeRefused) {
    for (const route of routes) {
      const parents = status[`${route.kind}/${route.namespace}/${route.name}`]?.parents ?? [];
      for (const parent of parents) {
        const accepted = parent.conditions.find((c) => c.type === 'Accepted');
        if (accepted?.status !== 'True') problems.push(`${route.kind} ${route.name} on ${parent.parentRef.name}: ${accepted ? conditionText(accepted) : 'no Accepted'}`);
      }
      if (parents.length === 0) problems.push(`${route.kind} ${route.name}: no status`);
    }
  }
  const pools = {
    route: routes.flatMap((r) => (status[`${r.kind}/${r.namespace}/${r.name}`]?.parents ?? []).flatMap((p) => p.conditions)),
    gateway: gateways.flatMap((g) => status[`Gateway/${g.namespace}/${g.name}`]?.conditions ?? []),
    listener: gateways.flatMap((g) => (status[`Gateway/${g.namespace}/${g.name}`]?.listeners ?? []).flatMap((l) => l.conditions)),
    policy: policies.flatMap((p) => (status[`BackendTLSPolicy/${p.namespace}/${p.name}`]?.ancestors ?? []).flatMap((a) => a.conditions)),
  };
  pools.any = [...pools.route, ...pools.gateway, ...pools.listener, ...pools.policy];
  if (/NamespacesMustBeReady\(/.test(test.body)) problems.push(...readiness(report, [...objectsOf(base), ...testObjects]));
  for (const want of expected) {
    if (!pools[want.scope].some(matches(want))) problems.push(`no ${want.scope} with ${conditionText(want)}`);
  }
  return problems;
}

// ------------------------------------------------------------------------------ main

const files = readdirSync(testsDir).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go') && f !== 'main.go').sort();
const rows = [];
// The suite's setup: the base manifests alone, and every namespace ready.
const setup = renderTest([]);
const setupProblems = setup.error ? [setup.error] : readiness(setup.report, objectsOf(base));
rows.push({ test: '(setup: base manifests, namespaces ready)', features: [], missing: [], verdict: setupProblems.length === 0 ? 'pass' : 'fail', problems: setupProblems });
for (const file of files) {
  for (const test of testsOf(readFileSync(path.join(testsDir, file), 'utf8'))) {
    if (!families.test(test.name)) continue;
    // `…NotSupported` tests are for implementations without the feature they name, which we have.
    const missing = test.name.endsWith('NotSupported') ? ['(for implementations without it)'] : test.features.filter((f) => !builtFeatures.has(f));
    const row = { test: test.name, features: test.features, missing };
    rows.push(row);
    if (missing.length > 0 && !renderAll) {
      row.verdict = 'n/a';
      continue;
    }
    const manifests = test.manifests.map((m) => readFileSync(path.join(checkout, 'conformance', m), 'utf8'));
    const rendered = renderTest(manifests);
    if (rendered.error) {
      row.verdict = 'error';
      row.problems = [rendered.error];
      continue;
    }
    const problems = judge(test, rendered.report, objectsOf(manifests.join('\n---\n')));
    row.verdict = problems.length === 0 ? 'pass' : 'fail';
    row.problems = problems;
  }
}

if (asJson) {
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
} else {
  for (const row of rows) {
    const note = row.verdict === 'n/a' ? `needs ${row.missing.join(', ')}` : (row.problems ?? []).join('; ');
    process.stdout.write(`${row.verdict.padEnd(5)} ${row.test}${note ? `  — ${note}` : ''}\n`);
  }
  const count = (v) => rows.filter((r) => r.verdict === v).length;
  process.stdout.write(`\n${count('pass')} pass, ${count('fail')} fail, ${count('error')} error, ${count('n/a')} n/a (of ${rows.length})\n`);
}
