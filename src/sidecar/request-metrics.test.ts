import { describe, expect, it } from 'vitest';
import type { RequestLogTables } from '../translate/dataplane/request-log.js';
import { RequestMetrics } from './request-metrics.js';

const tables: RequestLogTables = {
  routes: new Map([
    ['r1', { namespace: 'shop', ingress: 'web', service: 'front', path: '/' }],
    ['r2', { namespace: 'shop', ingress: 'api', service: 'api', path: '/api' }],
  ]),
  hosts: ['shop.example.test', '*.apps.example.test'],
  passthroughNames: ['vault.example.test', '*.db.example.test'],
  canaries: new Map([['shop_api-canary_80', 'shop-api-canary-80']]),
};

function counting() {
  const dropped: string[] = [];
  const replaced: string[] = [];
  const metrics = new RequestMetrics({
    controller: { namespace: 'infra', class: 'nginx', pod: 'p-1' },
    onLineDropped: (reason) => dropped.push(reason),
    onValueDropped: (label) => replaced.push(label),
  });
  metrics.setTables('g1', () => tables);
  return { metrics, dropped, replaced };
}

/** The samples of the exposition, `name{labels} value` → value. */
function samples(metrics: RequestMetrics): Map<string, number> {
  return new Map(
    metrics
      .exposition()
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1))]),
  );
}

const constant = 'controller_class="nginx",controller_namespace="infra",controller_pod="p-1"';
const web = (method: string, status: string, host = 'shop.example.test', canary = '') =>
  `canary="${canary}",${constant},host="${host}",ingress="web",method="${method}",namespace="shop",path="/",service="front",status="${status}"`;

describe('request lines', () => {
  it('count each request under its route, status, method and host, with every histogram observed', () => {
    const { metrics, dropped, replaced } = counting();
    metrics.handleLines(
      [
        'h|r1|200|GET|120|0.004|512|0.001|0.002|0.003||shop.example.test',
        'h|r1|200|GET|80|0.300|20000|0.000|0.250|0.290||SHOP.example.test',
        'h|r1|503|GET|80|0.010|200|-|-|-||shop.example.test',
        'h|r1|502|GET|80|0.020|200|0.001, 0.002|0.003, 0.004|0.005, 0.006||shop.example.test',
      ].join('\n'),
    );
    expect(dropped).toEqual([]);
    expect(replaced).toEqual([]);
    const s = samples(metrics);
    expect(s.get(`nginx_ingress_controller_requests{${web('GET', '200')}}`)).toBe(2);
    expect(s.get(`nginx_ingress_controller_requests{${web('GET', '503')}}`)).toBe(1);
    expect(s.get(`nginx_ingress_controller_request_duration_seconds_count{${web('GET', '200')}}`)).toBe(2);
    expect(s.get(`nginx_ingress_controller_request_duration_seconds_sum{${web('GET', '200')}}`)).toBeCloseTo(0.304, 9);
    expect(s.get(`nginx_ingress_controller_request_duration_seconds_bucket{${web('GET', '200')},le="0.005"}`)).toBe(1);
    expect(s.get(`nginx_ingress_controller_request_duration_seconds_bucket{${web('GET', '200')},le="0.25"}`)).toBe(1);
    expect(s.get(`nginx_ingress_controller_request_duration_seconds_bucket{${web('GET', '200')},le="0.5"}`)).toBe(2);
    expect(s.get(`nginx_ingress_controller_request_size_sum{${web('GET', '200')}}`)).toBe(200);
    expect(s.get(`nginx_ingress_controller_request_size_bucket{${web('GET', '200')},le="80"}`)).toBe(1);
    expect(s.get(`nginx_ingress_controller_request_size_bucket{${web('GET', '200')},le="+Inf"}`)).toBe(2);
    expect(s.get(`nginx_ingress_controller_bytes_sent_bucket{${web('GET', '200')},le="1000"}`)).toBe(1);
    expect(s.get(`nginx_ingress_controller_bytes_sent_sum{${web('GET', '200')}}`)).toBe(20512);
    expect(s.get(`nginx_ingress_controller_header_duration_seconds_sum{${web('GET', '200')}}`)).toBeCloseTo(0.252, 9);
    // No upstream (`-`) and retries (several values) are not observed, as in ingress-nginx; the request is counted.
    expect(s.get(`nginx_ingress_controller_connect_duration_seconds_count{${web('GET', '503')}}`)).toBe(0);
    expect(s.get(`nginx_ingress_controller_response_duration_seconds_count{${web('GET', '502')}}`)).toBe(0);
    expect(s.get(`nginx_ingress_controller_request_duration_seconds_count{${web('GET', '502')}}`)).toBe(1);
  });

  it('replace what clients choose: an unknown host by "", an invented method by OTHER, and count the replacements', () => {
    const { metrics, replaced } = counting();
    const lines = ['h|r1|200|BREW|80|0.001|100|0.000|0.001|0.001||shop.example.test', 'h|r1|200|GET|80|0.001|100|0.000|0.001|0.001||random-1.example.test'];
    metrics.handleLines([...lines, ...lines].join('\n'));
    expect(replaced).toEqual(['method', 'host', 'method', 'host']);
    const s = samples(metrics);
    expect(s.get(`nginx_ingress_controller_requests{${web('OTHER', '200')}}`)).toBe(2);
    expect(s.get(`nginx_ingress_controller_requests{${web('GET', '200', '')}}`)).toBe(2);
    expect(metrics.exposition()).not.toContain('random-1');
  });

  it('keep counting every request exactly when clients send more hosts than the cache of label fields holds', () => {
    const { metrics, replaced } = counting();
    const hosts = 12_000;
    const lines = Array.from({ length: hosts }, (_, i) => `h|r1|200|GET|80|0.001|100|0.000|0.001|0.001||h${i}.example.test`);
    metrics.handleLines([...lines, ...lines].join('\n'));
    expect(replaced.length).toBe(2 * hosts);
    const s = samples(metrics);
    expect(s.get(`nginx_ingress_controller_requests{${web('GET', '200', '')}}`)).toBe(2 * hosts);
    expect(s.get(`nginx_ingress_controller_request_duration_seconds_bucket{${web('GET', '200', '')},le="0.005"}`)).toBe(2 * hosts);
    expect(metrics.exposition().split('\n').filter((l) => l.startsWith('nginx_ingress_controller_requests{'))).toHaveLength(1);
  });

  it('read only plain numbers: no value, a leading or trailing dot, two dots, a sign or an exponent is not observed', () => {
    const { metrics } = counting();
    const times = ['', '.5', '5.', '1.2.3', '-1', '1e3', '0x10', '0.5'];
    metrics.handleLines(times.map((t) => `h|r1|200|GET|80|${t}|100|0.000|0.001|0.001||shop.example.test`).join('\n'));
    const s = samples(metrics);
    expect(s.get(`nginx_ingress_controller_requests{${web('GET', '200')}}`)).toBe(times.length);
    expect(s.get(`nginx_ingress_controller_request_duration_seconds_count{${web('GET', '200')}}`)).toBe(1);
    expect(s.get(`nginx_ingress_controller_request_duration_seconds_sum{${web('GET', '200')}}`)).toBe(0.5);
  });

  it('count a host under the wildcard that serves it, a host with a bar in it whole, and the canary that served', () => {
    const { metrics } = counting();
    metrics.handleLines(
      [
        'h|r1|200|GET|80|0.001|100|0.000|0.001|0.001||a.apps.example.test',
        'h|r1|200|GET|80|0.001|100|0.000|0.001|0.001||b.APPS.example.test',
        'h|r1|200|GET|80|0.001|100|0.000|0.001|0.001||shop.example.test|x',
        'h|r1|200|GET|80|0.001|100|0.000|0.001|0.001|shop_api-canary_80|shop.example.test',
        'h|r1|200|GET|80|0.001|100|0.000|0.001|0.001|shop_front_80|shop.example.test',
      ].join('\n'),
    );
    const s = samples(metrics);
    expect(s.get(`nginx_ingress_controller_requests{${web('GET', '200', '*.apps.example.test')}}`)).toBe(2);
    expect(s.get(`nginx_ingress_controller_requests{${web('GET', '200', '')}}`)).toBe(1);
    expect(s.get(`nginx_ingress_controller_requests{${web('GET', '200', 'shop.example.test', 'shop-api-canary-80')}}`)).toBe(1);
    expect(s.get(`nginx_ingress_controller_requests{${web('GET', '200')}}`)).toBe(1);
  });

  it('drop lines it cannot count, by reason', () => {
    const { metrics, dropped } = counting();
    metrics.handleLines(
      [
        'h|r1|200|GET',
        'h|r1|2000|GET|80|0.001|100|0.000|0.001|0.001||shop.example.test',
        'h|r1|099|GET|80|0.001|100|0.000|0.001|0.001||shop.example.test',
        'h|nope|200|GET|80|0.001|100|0.000|0.001|0.001||shop.example.test',
        'x|r1',
        'c|200|10|20|0.5|unknown.example.test',
        'c|200|10|20',
        // The format before the SNI moved last: its lines are not read.
        's|vault.example.test|200|10|20|0.5',
      ].join('\n'),
    );
    expect(dropped).toEqual(['malformed', 'malformed', 'malformed', 'unknown-route', 'malformed', 'unknown-server-name', 'malformed', 'malformed']);
    expect(samples(metrics).size).toBe(0);
  });

  it('count a request with no route (nginx answered itself) under empty labels', () => {
    const { metrics } = counting();
    metrics.handleLines('h|-|404|GET|80|0.000|150|-|-|-||shop.example.test');
    expect(samples(metrics).get(`nginx_ingress_controller_requests{canary="",${constant},host="shop.example.test",ingress="",method="GET",namespace="",path="",service="",status="404"}`)).toBe(1);
  });

  it('count passthrough connections per SNI name served, with bytes both ways and the session duration', () => {
    const { metrics } = counting();
    metrics.handleLines(['c|200|100|2000|1.500|vault.example.test', 'c|502|10|0|0.001|vault.example.test', 'c|200|5|6|0.020|a.db.example.test'].join('\n'));
    const s = samples(metrics);
    const vault = `${constant},server_name="vault.example.test"`;
    expect(s.get(`ingress2nginx_passthrough_connections_total{${vault},status="200"}`)).toBe(1);
    expect(s.get(`ingress2nginx_passthrough_connections_total{${vault},status="502"}`)).toBe(1);
    expect(s.get(`ingress2nginx_passthrough_received_bytes_total{${vault}}`)).toBe(110);
    expect(s.get(`ingress2nginx_passthrough_sent_bytes_total{${vault}}`)).toBe(2000);
    expect(s.get(`ingress2nginx_passthrough_session_duration_seconds_count{${vault}}`)).toBe(2);
    expect(s.get(`ingress2nginx_passthrough_connections_total{${constant},server_name="*.db.example.test",status="200"}`)).toBe(1);
  });

  it("keep the routes of the config before for its workers' last lines, and forget older ones", () => {
    const { metrics } = counting();
    metrics.handleLines('h|r2|200|GET|80|0.001|100|0.000|0.001|0.001||shop.example.test');
    metrics.setTables('g2', () => ({ ...tables, routes: new Map() }));
    metrics.handleLines('h|r2|200|GET|80|0.001|100|0.000|0.001|0.001||shop.example.test');
    expect(metrics.exposition()).toMatch(/nginx_ingress_controller_requests\{[^}]*ingress="api"[^}]*\} 2/);
    metrics.setTables('g3', () => ({ ...tables, routes: new Map() }));
    expect(metrics.exposition()).not.toContain('ingress="api"');
  });
});
