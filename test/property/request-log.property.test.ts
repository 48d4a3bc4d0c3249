import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RequestMetrics } from '../../src/sidecar/request-metrics.js';
import type { RequestLogTables } from '../../src/translate/dataplane/request-log.js';

/**
 * The request metrics' lines (templates: `i2n_request`, `i2n_connection`) read back over arbitrary client
 * bytes (issue 37): whatever a client puts in the fields it chooses (the SNI, the Host header), the
 * fields nginx measured are read as written and the line is counted under the name nginx routed it by,
 * never under another tenant's. nginx's writing is modelled as nginx does it: the stream log escapes
 * `"`, `\` and bytes outside 0x20–0x7e as `\xHH`; the http line is unescaped, and nginx takes no CR, LF
 * or NUL into a Host header (and lowercases it).
 */

const runs = Number(process.env.I2N_PROPERTY_RUNS ?? 300);

const tables: RequestLogTables = {
  routes: new Map([['r1', { namespace: 'shop', ingress: 'web', service: 'front', path: '/' }]]),
  hosts: ['shop.example.test', '*.apps.example.test'],
  passthroughNames: ['pt.victim.example.com', '*.attacker.example'],
  canaries: new Map(),
};

function metricsOf(): { metrics: RequestMetrics; dropped: string[] } {
  const dropped: string[] = [];
  const metrics = new RequestMetrics({ controller: { namespace: 'infra', class: 'nginx', pod: 'p' }, onLineDropped: (reason) => dropped.push(reason), onValueDropped: () => undefined });
  metrics.setTables('g', () => tables);
  return { metrics, dropped };
}

function samples(metrics: RequestMetrics): Map<string, number> {
  const lines = metrics.exposition().split('\n').filter((line) => line !== '' && !line.startsWith('#'));
  return new Map(lines.map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1))]));
}

/** nginx's stream `log_format` default escaping, byte by byte (ngx_stream_log_escape). */
function streamEscaped(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) {
    out += byte === 0x22 || byte === 0x5c || byte < 0x20 || byte > 0x7e ? `\\x${byte.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(byte);
  }
  return out;
}

/** The name a line must be counted under: the served name that covers it, exact or the longest wildcard suffix. */
function servedName(name: string, names: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  if (names.includes(lower)) return lower;
  const wildcards = names.filter((n) => n.startsWith('*.') && lower.endsWith(n.slice(1)));
  return wildcards.sort((a, b) => b.length - a.length)[0];
}

/** Client bytes, often built from what a forger would use: bars, served names, numbers. */
const clientBytes = fc.oneof(
  fc.uint8Array({ maxLength: 255 }),
  fc
    .array(fc.constantFrom('|', 'pt.victim.example.com', 'shop.example.test', '.attacker.example', '.apps.example.test', '200', '3000000000', '1.5', 'h', 'c', '\\', '"', '\x01', '\xff', ' '), { maxLength: 12 })
    .map((parts) => Uint8Array.from(Buffer.from(parts.join(''), 'latin1'))),
);

const measured = fc.record({
  status: fc.integer({ min: 100, max: 599 }).map(String),
  received: fc.nat({ max: 1e9 }),
  sent: fc.nat({ max: 1e9 }),
  millis: fc.nat({ max: 1e7 }),
});

describe('request metrics lines over arbitrary client bytes', () => {
  it('a passthrough line counts its bytes under the SNI name nginx routed by, and nowhere else', () => {
    fc.assert(
      fc.property(clientBytes, measured, (sni, m) => {
        const { metrics } = metricsOf();
        const escaped = streamEscaped(sni);
        metrics.handleLines(`c|${m.status}|${m.received}|${m.sent}|${(m.millis / 1000).toFixed(3)}|${escaped}`);
        const name = servedName(escaped, tables.passthroughNames);
        const received = [...samples(metrics)].filter(([key]) => key.startsWith('ingress2nginx_passthrough_received_bytes_total'));
        if (name === undefined) {
          expect(received).toEqual([]);
        } else {
          expect(received).toEqual([[`ingress2nginx_passthrough_received_bytes_total{controller_class="nginx",controller_namespace="infra",controller_pod="p",server_name="${name}"}`, m.received]]);
        }
      }),
      { numRuns: runs },
    );
  });

  it('a request line keeps its route, status and method whatever the Host, and labels only a served host', () => {
    const method = fc.stringMatching(/^[A-Z_-]{1,12}$/);
    const host = clientBytes.map((bytes) => Buffer.from(bytes.filter((b) => b !== 0x0d && b !== 0x0a && b !== 0x00)).toString('latin1').toLowerCase());
    fc.assert(
      fc.property(host, method, measured, (hostText, methodText, m) => {
        const { metrics, dropped } = metricsOf();
        metrics.handleLines(`h|r1|${m.status}|${methodText}|${m.received}|0.001|${m.sent}|-|-|-|shop_front_80|${hostText}`);
        expect(dropped).toEqual([]);
        const requests = [...samples(metrics)].filter(([key]) => key.startsWith('nginx_ingress_controller_requests{'));
        expect(requests).toHaveLength(1);
        const [key, count] = requests[0]!;
        expect(count).toBe(1);
        expect(key).toContain(`ingress="web",method="${['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'].includes(methodText) ? methodText : 'OTHER'}",namespace="shop"`);
        expect(key).toContain(`status="${m.status}"`);
        expect(key).toContain(`host="${servedName(hostText, tables.hosts) ?? ''}"`);
      }),
      { numRuns: runs },
    );
  });
});
