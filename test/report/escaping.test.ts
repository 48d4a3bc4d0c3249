import { rm } from 'node:fs/promises';
import MarkdownIt from 'markdown-it';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markdownCode, markdownText } from '../../src/report/escape.js';
import { printable } from '../../src/model/printable.js';
import { runCli } from '../support/cli.js';
import { hostileManifests, payloads } from '../support/hostile-review.js';

/**
 * Hostile values (markup and script in file names, resource names, hosts, paths, annotations and a
 * certificate subject) stay text in every report form. The markdown is rendered the way a code host
 * renders a comment (raw HTML allowed, links made from bare URLs), and must produce no element or
 * link from a payload. (The review page is checked in a real browser: test/e2e/review-page.test.ts.)
 */

// What GitHub-flavoured rendering would turn into live markup if a payload were not escaped.
const live = /<(img|script|svg|b)\b|<a\s/i;
const markdown = new MarkdownIt({ html: true, linkify: true });

let manifests: Awaited<ReturnType<typeof hostileManifests>>;
beforeAll(async () => {
  manifests = await hostileManifests();
});
afterAll(async () => {
  await rm(manifests.dir, { recursive: true, force: true });
});

describe('escaping in reports', () => {
  it('the markdown check can fail: an unescaped payload renders as an element', () => {
    expect(markdown.render(`| a |\n| --- |\n| ${payloads.subject} |`)).toMatch(live);
    expect(markdown.render(markdownText(payloads.subject))).not.toMatch(live);
  });

  it('routes --format markdown renders every payload as text', async () => {
    const result = await runCli(['routes', '-f', manifests.input, '--format', 'markdown']);
    expect(result.stdout).toContain('web/cert');
    const html = markdown.render(result.stdout);
    expect(html).not.toMatch(live);
    expect(html).toContain('&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;.yaml');
  });

  it('diff --format markdown renders every payload as text, with no link from a payload', async () => {
    const result = await runCli(['diff', '-f', manifests.input, '--base-manifests', manifests.base, '--format', 'markdown']);
    const html = markdown.render(result.stdout);
    expect(html).not.toMatch(live);
    for (const text of ['__pwned=2', '__pwned=5', '__pwned=6']) expect(html).toContain(text);
  });

  it('SARIF carries the payloads as exact JSON strings', async () => {
    const result = await runCli(['validate', '-f', manifests.input, '--format', 'sarif']);
    const log = JSON.parse(result.stdout) as { runs: { results: { message: { text: string }; locations?: { physicalLocation?: { artifactLocation: { uri: string } } }[] }[] }[] };
    const results = log.runs[0]!.results;
    // The diagnostic quotes the annotation name as JSON does; SARIF carries that text unchanged.
    expect(results.some((r) => r.message.text.includes(JSON.stringify(payloads.annotationName)))).toBe(true);
    const uri = results.find((r) => r.locations?.[0]?.physicalLocation)?.locations?.[0]?.physicalLocation?.artifactLocation.uri ?? '';
    expect(uri).not.toMatch(/[<>" ]/);
    expect(decodeURIComponent(uri).endsWith(payloads.fileName)).toBe(true);
  });

  it('text output makes control and bidirectional characters visible', () => {
    expect(printable('a\nb\u202Ec\u0085')).toBe('a\\nb\\u202ec\\u0085');
  });

  it('markdown code spans survive backticks and pipes', () => {
    expect(markdownCode('a`b|c')).toBe('``a`b\\|c``');
    expect(markdown.render(`| x |\n| --- |\n| ${markdownCode('`<img src=x>`|')} |`)).not.toMatch(live);
  });
});
