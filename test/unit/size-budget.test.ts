import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostileRouteShape, httpGateway, httpRoute, ingress, service, type RouteShape } from '../../bench/largest-objects.js';
import { build } from '../../src/build/build.js';
import type { NginxConfig } from '../../src/model/nginx.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { maxUnitsPerNamespace, maxUnitsPerObject, unitsOf } from '../../src/translate/checks/size-budget.js';
import { httpRouteLoadCost } from '../../src/translate/gateway/http-route-size.js';
import { checkBuiltFiles, requireNginx } from '../support/nginx.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * One budget of what nginx must load (locations, maps, map entries), per object and per namespace, for
 * Ingresses and HTTPRoutes alike (issue 37, defect 7): the hostile HTTPRoute that asked for 49,162 maps
 * is refused before render, and the config of everything else loads.
 */

const base = [httpGateway(), service('apps', 'web'), service('team', 'web', 2)];

function run(objects: readonly SourceObject[]) {
  return build({ objects: [...base, ...objects] }, testTranslateOptions());
}

function loaded(model: NginxConfig): number {
  const locations = [model.http.defaultServer, ...model.http.virtualHosts].reduce((n, host) => n + host.locations.length, 0);
  const maps = model.http.extensions.maps;
  return locations + maps.length + maps.reduce((n, map) => n + map.entries.length, 0);
}

const codes = (result: ReturnType<typeof run>, code: string) => result.diagnostics.filter((d) => d.code === code).map((d) => `${d.resource?.namespace}/${d.resource?.name}`);

describe('the HTTPRoute budget', () => {
  it('refuses the hostile route before render, says so in its status, and serves the others; nginx -t loads the rest', async () => {
    const result = run([httpRoute('apps', 'hostile', hostileRouteShape), httpRoute('apps', 'fine', { hosts: 2, rules: 4, matches: 4, conditions: 2 })]);
    expect(codes(result, 'httproute-too-large')).toEqual(['apps/hostile']);
    expect(result.model.http.extensions.maps.length).toBeLessThan(200);
    expect(result.model.http.virtualHosts.map((h) => h.serverName)).toEqual(['h0.fine.apps.example.test', 'h1.fine.apps.example.test']);
    const status = result.statuses.find((s) => s.kind === 'HTTPRoute' && s.name === 'hostile');
    expect(status && 'parents' in status && status.parents[0]?.conditions.find((c) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    const nginx = requireNginx();
    const runDir = await mkdtemp(join(tmpdir(), 'i2n-budget-'));
    const files = build(
      { objects: [...base, httpRoute('apps', 'hostile', hostileRouteShape)] },
      testTranslateOptions({ runDir, nginxVersion: nginx.version, ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }) }),
    ).files;
    expect((await checkBuiltFiles(files, runDir)).ok).toBe(true);
  });

  it.each<RouteShape>([
    { hosts: 1, rules: 1, matches: 1, conditions: 0 },
    { hosts: 3, rules: 2, matches: 5, conditions: 0 },
    { hosts: 1, rules: 4, matches: 8, conditions: 4 },
    { hosts: 4, rules: 3, matches: 6, conditions: 2 },
    { hosts: 16, rules: 4, matches: 8, conditions: 1 },
  ])('counts no less than nginx is given to load: %o', (shape) => {
    const without = loaded(run([]).model);
    const route = httpRoute('apps', 'r', shape);
    const result = run([route]);
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const spec = (route.raw as { spec: Parameters<typeof httpRouteLoadCost>[0] }).spec;
    const counted = unitsOf(httpRouteLoadCost(spec, shape.hosts));
    expect(counted).toBeGreaterThanOrEqual(loaded(result.model) - without);
    // And not far above it.
    expect(counted).toBeLessThanOrEqual(3 * (loaded(result.model) - without));
  });

  it('shares a namespace budget with the Ingresses, which draw on it first; another namespace is served', () => {
    // Ten Ingresses of 4,900 locations (and a host each) leave a namespace less than a route of 1,000 units.
    const ingresses = Array.from({ length: 10 }, (_, i) => ingress('team', `wide-${i}`, 49, 100));
    const route = { hosts: 4, rules: 4, matches: 16, conditions: 0 };
    expect(unitsOf(httpRouteLoadCost((httpRoute('team', 'late', route).raw as { spec: Parameters<typeof httpRouteLoadCost>[0] }).spec, 4))).toBeGreaterThan(maxUnitsPerNamespace - 10 * 4949);
    const result = run([...ingresses, httpRoute('team', 'late', route), httpRoute('apps', 'other', route)]);
    expect(codes(result, 'namespace-too-large')).toEqual(['team/late']);
    expect(codes(result, 'ingress-too-large')).toEqual([]);
    expect(result.model.http.virtualHosts.some((h) => h.serverName.endsWith('.other.apps.example.test'))).toBe(true);
    expect(result.model.http.virtualHosts.some((h) => h.serverName.endsWith('.late.team.example.test'))).toBe(false);
  });

  it('holds an Ingress to the same per-object limit', () => {
    const result = run([ingress('team', 'too-wide', 51, 100)]);
    expect(51 * 100 + 51).toBeGreaterThan(maxUnitsPerObject);
    expect(codes(result, 'ingress-too-large')).toEqual(['team/too-wide']);
  });
});
