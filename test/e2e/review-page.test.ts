import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.js';
import { runCli } from '../support/cli.js';
import { testNowText } from '../support/options.js';
import { hostileManifests } from '../support/hostile-review.js';
import { writeManyRoutes } from '../support/many-routes.js';

/**
 * The review page in a real headless Chromium (Debian's, driven by playwright-core), opened from a
 * file URL as a CI artifact would be. No timed assertions: bench/review-bench.ts prints the timings.
 * The screenshot goes to artifacts/ (I2N_ARTIFACTS_DIR to move it) and, with I2N_UPDATE_DOCS=1, to docs/.
 */

const repoRoot = join(import.meta.dirname, '..', '..');
const artifacts = process.env['I2N_ARTIFACTS_DIR'] ?? join(repoRoot, 'artifacts');
const now = ['--now', testNowText, '--run-dir', '/tmp/ingress2nginx-golden'];

let browser: Browser;
let work: string;
beforeAll(async () => {
  browser = await launchChromium();
  work = await mkdtemp(join(tmpdir(), 'ingress2nginx-review-page-'));
});
afterAll(async () => {
  await browser?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

interface Opened {
  readonly page: Page;
  /** Console errors and uncaught exceptions. */
  readonly errors: string[];
  /** Every URL the page asked for, the page itself included. */
  readonly requests: string[];
  readonly dialogs: string[];
}

async function open(file: string, viewport = { width: 1400, height: 1000 }): Promise<Opened> {
  const page = await browser.newPage({ viewport });
  const opened: Opened = { page, errors: [], requests: [], dialogs: [] };
  page.on('console', (message) => {
    if (message.type() === 'error') opened.errors.push(message.text());
  });
  page.on('pageerror', (error) => opened.errors.push(String(error)));
  page.on('request', (request) => opened.requests.push(request.url()));
  page.on('dialog', (dialog) => {
    opened.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return opened;
}

const count = (page: Page, section: string) => page.locator(`#${section} .count`).first().textContent();
const firstCells = (page: Page, section: string, column: number) =>
  page.locator(`#${section} .r`).evaluateAll(
    (rows, index) => rows.sort((a, b) => parseFloat((a as HTMLElement).style.top) - parseFloat((b as HTMLElement).style.top)).map((r) => r.children[index]?.textContent ?? ''),
    column,
  );

describe('review page in Chromium', () => {
  it('shows routes, changes, data plane, diagnostics and certificates; sorts and filters; fetches nothing', async () => {
    const file = join(work, 'review.html');
    const result = await runCli([
      'review',
      '-f', 'fixtures/gateway-mixed/input',
      '-f', 'fixtures/https-backends/input',
      '-f', 'fixtures/risky/tls-mode-changed/fires/new',
      '--base-manifests', 'fixtures/gateway-mixed/input',
      '--base-manifests', 'fixtures/risky/tls-mode-changed/fires/base',
      '-o', file,
      ...now,
    ]);
    expect(result.stderr).not.toContain('internal error');
    expect(result.stderr).toMatch(/^wrote .*review\.html: 16 route\(s\)/m);
    const { page, errors, requests, dialogs } = await open(file);

    expect(await count(page, 'routes')).toBe('16 of 16');
    await page.locator('#routes input[type=search]').fill('passthrough');
    expect(await count(page, 'routes')).toBe('3 of 16');
    for (const mode of await firstCells(page, 'routes', 3)) expect(mode).toBe('passthrough');
    await page.locator('#routes input[type=search]').fill('');

    await page.locator('#routes .head button', { hasText: 'HOST' }).click();
    const ascending = await firstCells(page, 'routes', 1);
    expect(ascending).toEqual([...ascending].sort());
    await page.locator('#routes .head button', { hasText: 'HOST' }).click();
    expect(await page.locator('#routes .head button', { hasText: 'HOST' }).getAttribute('aria-sort')).toBe('descending');
    expect((await firstCells(page, 'routes', 1))[0]).toBe([...ascending].sort().at(-1));

    const plane = page.locator('#data-plane');
    expect((await plane.boundingBox())?.width ?? 0).toBeGreaterThan(500);
    expect(await plane.locator('text').allTextContents()).toEqual(expect.arrayContaining(['SNI front :443', 'passthrough (TLS untouched)', 'closed']));

    expect(await page.locator('#risky li').allTextContents()).toEqual([expect.stringContaining('tls-mode-changed')]);
    expect(await count(page, 'diff')).toMatch(/^[1-9]\d* of [1-9]\d*$/);
    const where = await firstCells(page, 'diagnostics', 2);
    expect(where.length).toBeGreaterThan(0);
    for (const place of where) expect(place).toMatch(/^fixtures\/.+\.yaml:\d+(:\d+)?$/);
    expect(await count(page, 'certificates')).toBe('1 of 1');

    await mkdir(artifacts, { recursive: true });
    await page.locator('#routes input[type=search]').fill('');
    await page.screenshot({ path: join(artifacts, 'review-page.png'), fullPage: true });
    if (process.env['I2N_UPDATE_DOCS'] === '1') await copyFile(join(artifacts, 'review-page.png'), join(repoRoot, 'docs', 'review-page.png'));

    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(requests).toEqual([pathToFileURL(file).href]);
    await page.close();
  });

  it('shows hostile values as text: nothing in them runs, becomes an element or is fetched', async () => {
    const manifests = await hostileManifests();
    try {
      const file = join(work, 'hostile.html');
      await runCli(['review', '-f', manifests.input, '--base-manifests', manifests.base, '-o', file, ...now]);
      const { page, errors, requests, dialogs } = await open(file);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('script').count()).toBe(2);
      expect(await page.locator('svg').count()).toBe(1);
      expect(await page.locator('b').count()).toBe(0);

      expect(await page.locator('#risky li').allTextContents()).toEqual([expect.stringContaining('<img src=x onerror="window.__pwned=1">.yaml')]);
      await page.locator('#diagnostics input[type=search]').fill('__pwned=5');
      expect(await count(page, 'diagnostics')).toMatch(/^[1-9]\d* of /);
      // The message quotes the annotation name as JSON does, so its quotes show escaped.
      expect((await page.locator('#diagnostics .r').first().textContent()) ?? '').toContain('<img src=\\"x\\" onerror=\\"window.__pwned=5\\">');
      // Node writes the subject the RFC 2253 way, with backslashes before < > and ".
      expect(await page.locator('#certificates .r').first().textContent()).toMatch(/CN=\\<img src=\\"x\\" onerror=\\"window\.__pwned=6\\"\\>/);
      expect(await page.locator('#routes .r').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('<img src=x onerror="window.__pwned=1">.yaml')]));

      expect(errors).toEqual([]);
      expect(dialogs).toEqual([]);
      expect(requests).toEqual([pathToFileURL(file).href]);
      await page.close();
    } finally {
      await rm(manifests.dir, { recursive: true, force: true });
    }
  });

  it('loads and filters 10,000 routes, keeping only the rows in view in the page', async () => {
    const input = await writeManyRoutes(work, 10_000);
    const file = join(work, 'many.html');
    const result = await runCli(['review', '-f', input, '-o', file, ...now]);
    expect(result.stderr).toMatch(/: 10000 route\(s\)/);
    const { page, errors, requests } = await open(file);
    expect(await count(page, 'routes')).toBe('10000 of 10000');
    expect(await page.locator('#routes .r').count()).toBeLessThan(100);

    await page.locator('#routes input[type=search]').fill('app-077');
    expect(await count(page, 'routes')).toBe('100 of 10000');
    await page.locator('#routes input[type=search]').fill('app-07777.bench');
    expect(await count(page, 'routes')).toBe('1 of 10000');
    expect(await firstCells(page, 'routes', 1)).toEqual(['app-07777.bench.example.test']);

    await page.locator('#routes input[type=search]').fill('');
    await page.locator('#routes .viewport').evaluate((viewport) => viewport.scrollTo(0, viewport.scrollHeight));
    await expect.poll(() => firstCells(page, 'routes', 1).then((hosts) => hosts.at(-1))).toBe('app-09999.bench.example.test');

    expect(errors).toEqual([]);
    expect(requests).toEqual([pathToFileURL(file).href]);
    await page.close();
  });
});
