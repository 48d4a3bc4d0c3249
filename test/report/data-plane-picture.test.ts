import { describe, expect, it } from 'vitest';
import { build } from '../../src/build/build.js';
import { dataPlaneSvg } from '../../src/report/data-plane-svg.js';
import { routeTable } from '../../src/report/routes.js';
import { readInputs } from '../../src/sources/files.js';
import { fixtureCases } from '../support/golden.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * The review page's picture of the data plane says what the config does: its edges are the hand-offs
 * of the model, its lists and counts are the model's, and no arrow runs through a box it does not lead
 * to. Checked on the examples and on every golden fixture.
 */

interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly title: string;
  readonly lines: readonly string[];
}

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly d: string;
}

function picture(svg: string): { boxes: Map<string, Box>; edges: Edge[] } {
  const boxes = new Map<string, Box>();
  for (const [, id, body] of svg.matchAll(/<g class="box [a-z]+" data-box="([^"]+)">\n([\s\S]*?)\n<\/g>/g)) {
    const rect = /<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"/.exec(body!)!;
    const texts = [...body!.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!.replaceAll('&amp;', '&').replaceAll('&#39;', "'"));
    boxes.set(id!, { x: Number(rect[1]), y: Number(rect[2]), width: Number(rect[3]), height: Number(rect[4]), title: texts[0]!, lines: texts.slice(1) });
  }
  const edges = [...svg.matchAll(/<path class="edge" data-from="([^"]+)" data-to="([^"]+)" d="([^"]+)"/g)].map(([, from, to, d]) => ({ from: from!, to: to!, d: d! }));
  return { boxes, edges };
}

/** Points along a path of `M`, `C` (one cubic segment), `H` and `V` commands. */
function pointsOf(d: string): [number, number][] {
  const tokens = d.split(/[\s,]+/).filter(Boolean);
  const points: [number, number][] = [];
  let [x, y] = [0, 0];
  for (let i = 0; i < tokens.length; ) {
    const command = tokens[i++];
    if (command === 'M') {
      [x, y] = [Number(tokens[i++]), Number(tokens[i++])];
      points.push([x, y]);
    } else if (command === 'C') {
      const [c1x, c1y, c2x, c2y, ex, ey] = tokens.slice(i, i + 6).map(Number) as [number, number, number, number, number, number];
      i += 6;
      for (let t = 0.02; t <= 1; t += 0.02) {
        const u = 1 - t;
        points.push([u ** 3 * x + 3 * u * u * t * c1x + 3 * u * t * t * c2x + t ** 3 * ex, u ** 3 * y + 3 * u * u * t * c1y + 3 * u * t * t * c2y + t ** 3 * ey]);
      }
      [x, y] = [ex, ey];
    } else if (command === 'H' || command === 'V') {
      const target = Number(tokens[i++]);
      const [tx, ty] = command === 'H' ? [target, y] : [x, target];
      for (let t = 0.02; t <= 1; t += 0.02) points.push([x + (tx - x) * t, y + (ty - y) * t]);
      [x, y] = [tx, ty];
    } else {
      throw new Error(`unexpected path command ${command} in ${d}`);
    }
  }
  return points;
}

function expectNoEdgeThroughOtherBoxes(boxes: ReadonlyMap<string, Box>, edges: readonly Edge[]): void {
  for (const edge of edges) {
    for (const [id, box] of boxes) {
      if (id === edge.from || id === edge.to) continue;
      const inside = pointsOf(edge.d).find(([x, y]) => x > box.x + 1 && x < box.x + box.width - 1 && y > box.y + 1 && y < box.y + box.height - 1);
      expect(inside, `edge ${edge.from} → ${edge.to} runs through box ${id}`).toBeUndefined();
    }
  }
}

async function built(...paths: string[]) {
  const source = await readInputs(paths);
  const result = build(source.snapshot, testTranslateOptions({ expectClusterProvided: true }));
  return { result, ...picture(dataPlaneSvg(result.model)) };
}

describe('the data-plane picture', () => {
  it('of examples/: the edges of the config, and every list and count the model\'s', async () => {
    const { result, boxes, edges } = await built('examples');
    expect(edges.map((e) => `${e.from} → ${e.to}`).sort()).toEqual(
      ['front-443 → http', 'front-443 → passthrough', 'http → http-upstreams', 'passthrough → stream-backends', 'port-443 → front-443', 'port-http → http'].sort(),
    );
    expectNoEdgeThroughOtherBoxes(boxes, edges);

    const rows = routeTable(result).rows;
    const passthroughHosts = [...new Set(rows.filter((r) => r.mode === 'passthrough').map((r) => r.host))].sort();
    const terminatedHosts = result.model.http.virtualHosts.filter((h) => h.tls).map((h) => h.serverName);
    expect(passthroughHosts).toEqual(['*.db.example.com', 'argocd.example.com', 'vault.example.com']);

    const http = boxes.get('http')!;
    expect(http.lines[0]).toBe(`${terminatedHosts.length} terminate TLS, ${passthroughHosts.length} :80 only`);
    // The http servers serve passthrough hosts on port 80 only, and say so.
    for (const line of http.lines.slice(1)) {
      const host = line.replace(/ \(:80 only\)$/, '');
      if (line.startsWith('+ ')) continue;
      expect(line.endsWith('(:80 only)') ? passthroughHosts : terminatedHosts).toContain(host);
    }
    expect(boxes.get('passthrough')!.lines).toEqual([`${passthroughHosts.length} name(s)`, ...passthroughHosts]);

    const streamServices = [...new Set(rows.filter((r) => r.mode === 'passthrough').flatMap((r) => r.backends.map((b) => `${b.service}:${b.port}`)))].sort();
    expect(streamServices).toHaveLength(3);
    expect(boxes.get('stream-backends')!.lines).toEqual([`${streamServices.length} Service port(s)`, ...streamServices]);
    expect(boxes.get('port-http')!.lines).toEqual([`${result.model.http.virtualHosts.length} host(s)`]);
    expect(boxes.get('http-upstreams')!.lines[0]).toBe(`${result.model.http.upstreams.length} upstream(s)`);
  });

  it('of examples/helm-template/: one passthrough backend, one terminated host', async () => {
    const { boxes, edges } = await built('examples/helm-template');
    expectNoEdgeThroughOtherBoxes(boxes, edges);
    expect(boxes.get('http')!.lines.slice(0, 3)).toEqual(['1 terminate TLS, 1 :80 only', 'podinfo.example.com', 'argocd.example.com (:80 only)']);
    expect(boxes.get('stream-backends')!.lines).toEqual(['1 Service port(s)', 'argocd/argocd-server:443']);
  });

  it('without an SNI front, :443 leads to the http servers, around nothing', async () => {
    const { boxes, edges } = await built('fixtures/termination/input');
    expect(boxes.has('front-443')).toBe(false);
    expect(edges.map((e) => `${e.from} → ${e.to}`).sort()).toEqual(['http → http-upstreams', 'port-443 → http', 'port-http → http']);
    expectNoEdgeThroughOtherBoxes(boxes, edges);
  });

  it.each(fixtureCases)('of fixture %s: no arrow runs through a box it does not lead to', async (name) => {
    const { boxes, edges } = await built(`fixtures/${name}/input`);
    expect(edges.length).toBeGreaterThan(0);
    for (const edge of edges) expect(boxes.has(edge.from) && boxes.has(edge.to), `${edge.from} → ${edge.to}`).toBe(true);
    expectNoEdgeThroughOtherBoxes(boxes, edges);
  });
});
