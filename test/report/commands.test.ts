import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { testNowText } from '../support/options.js';
import { writeManyRoutes } from '../support/many-routes.js';

/** Exit codes and output limits of routes, diff --base-manifests and review. */

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ingress2nginx-report-commands-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const now = ['--now', testNowText];

describe('report commands', () => {
  it('diff needs exactly one of --base-manifests and --against (exit 2)', async () => {
    const neither = await runCli(['diff', '-f', 'fixtures/termination/input', ...now]);
    expect(neither.exitCode).toBe(2);
    expect(neither.stderr).toContain('give either --base-manifests');
    const both = await runCli(['diff', '-f', 'fixtures/termination/input', '--base-manifests', 'fixtures/termination/input', '--against', work, ...now]);
    expect(both.exitCode).toBe(2);
  });

  it('a missing input is a failure (exit 2), for routes, diff and review', async () => {
    expect((await runCli(['routes', '-f', join(work, 'missing.yaml'), ...now])).exitCode).toBe(2);
    expect((await runCli(['diff', '-f', 'fixtures/termination/input', '--base-manifests', join(work, 'missing'), ...now])).exitCode).toBe(2);
    expect((await runCli(['review', '-f', join(work, 'missing.yaml'), '-o', join(work, 'x.html'), ...now])).exitCode).toBe(2);
  });

  it('routes and review exit 1 when the input has errors, 0 when it is clean', async () => {
    expect((await runCli(['routes', '-f', 'fixtures/hostile/input', ...now])).exitCode).toBe(1);
    expect((await runCli(['routes', '-f', 'fixtures/termination/input', ...now])).exitCode).toBe(0);
    const page = join(work, 'clean.html');
    const clean = await runCli(['review', '-f', 'fixtures/termination/input', '-o', page, ...now]);
    expect(clean.exitCode).toBe(0);
    expect(clean.stdout).toBe('');
    expect(clean.stderr).toMatch(/^wrote .*clean\.html: 8 route\(s\), 0 diagnostic\(s\), \d+ bytes\n$/);
    expect(await readFile(page, 'utf8')).toMatch(/^<!doctype html>/);
    expect((await runCli(['review', '-f', 'fixtures/hostile/input', '-o', join(work, 'hostile.html'), ...now])).exitCode).toBe(1);
  });

  it('the same review input gives the same page bytes', async () => {
    const [a, b] = [join(work, 'a.html'), join(work, 'b.html')];
    await runCli(['review', '-f', 'fixtures/gateway-mixed/input', '--base-manifests', 'fixtures/merging/input', '-o', a, ...now]);
    await runCli(['review', '-f', 'fixtures/gateway-mixed/input', '--base-manifests', 'fixtures/merging/input', '-o', b, ...now]);
    expect(await readFile(a, 'utf8')).toBe(await readFile(b, 'utf8'));
  });

  it('the markdown diff stays under its size cap and says what it left out', async () => {
    const input = await writeManyRoutes(work, 2_000);
    const result = await runCli(['diff', '-f', input, '--base-manifests', 'fixtures/risky/empty.yaml', '--format', 'markdown', ...now]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout.length).toBeLessThanOrEqual(60_000);
    expect(result.stdout).toMatch(/^### ingress2nginx: route changes\n\n\*\*0 risky change\(s\)\*\* · 2000 added/);
    expect(result.stdout).toMatch(/> \d+ line\(s\) left out to stay under 60000 characters\./);
    expect(result.stdout).toContain('</details>');
  });
});
