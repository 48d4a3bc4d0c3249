import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

/**
 * The cache of parsed annotation sets lives as long as the cluster mode does. A tenant that rewrites its
 * Ingresses with fresh 150 KB annotations must not fill the heap: 2,000 such sets are parsed here in a
 * process with a 256 MB heap (a count-bounded cache of 4,096 sets ran out of memory after about 1,360).
 */

const annotations = pathToFileURL(join(import.meta.dirname, '..', '..', 'dist', 'src', 'translate', 'ingress', 'annotations', 'index.js')).href;

const script = `
const { parseIngressAnnotations } = await import(${JSON.stringify(annotations)});
const padding = 'x'.repeat(150 * 1024);
for (let i = 0; i < 2000; i++) {
  const { issues } = parseIngressAnnotations({
    'nginx.ingress.kubernetes.io/ssl-redirect': 'false',
    'nginx.ingress.kubernetes.io/tenant-padding': padding + i,
  });
  if (!issues.some((issue) => issue.code === 'annotation-unknown')) throw new Error('unexpected issues');
}
// Small sets, as charts make them, stay cached: the same set again is the same parsed value.
const set = { 'nginx.ingress.kubernetes.io/proxy-body-size': '8m' };
if (parseIngressAnnotations(set).value !== parseIngressAnnotations({ ...set }).value) throw new Error('small set not cached');
process.stdout.write('done');
`;

describe('the cache of parsed annotation sets', () => {
  it('stays within a 256 MB heap while a tenant writes 2,000 fresh 150 KB annotation sets', async () => {
    const result = await execa(process.execPath, ['--max-old-space-size=256', '--input-type=module', '-e', script], { reject: false });
    expect(result.stderr).not.toMatch(/heap out of memory/);
    expect(result.stdout).toBe('done');
    expect(result.exitCode).toBe(0);
  }, 120_000);
});
