import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';

/**
 * README.md is the front page and docs/ holds the rest: the front page stays short, names every page
 * under docs/, and no relative link in README.md, DEVELOPERS.md or docs/ leads nowhere.
 */

const repo = join(import.meta.dirname, '..', '..');
const markdown = new MarkdownIt();
type Tokens = ReturnType<MarkdownIt['parse']>;

/** Every file under `dir`, as paths relative to the repository. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(repo, dir), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]))
    .sort();
}

/** The targets of a page's links and images, as written (code spans and blocks are not links). */
function linkTargets(file: string): string[] {
  const targets: string[] = [];
  const visit = (tokens: Tokens) => {
    for (const token of tokens) {
      if (token.type === 'link_open') targets.push(token.attrGet('href') ?? '');
      if (token.type === 'image') targets.push(token.attrGet('src') ?? '');
      if (token.children) visit(token.children);
    }
  };
  visit(markdown.parse(readFileSync(join(repo, file), 'utf8'), {}));
  return targets;
}

/** A relative link's target as a path relative to the repository; undefined for URLs and anchors. */
function localTarget(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) return undefined;
  const path = decodeURIComponent(target.replace(/[#?].*$/, ''));
  return relative(repo, resolve(repo, dirname(file), path));
}

const pages = ['README.md', 'DEVELOPERS.md', ...filesUnder('docs').filter((file) => file.endsWith('.md'))];

describe('README.md and docs/', () => {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');

  it('README.md has at most 250 lines', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });

  it('README.md starts with the quick start of two commands', () => {
    const sections = readme.split('\n## ');
    expect(sections[1]?.split('\n')[0]).toBe('Quick start');
    expect(sections[1]).toContain('\n```sh\nnpm ci && npm run example\nnpm test\n```\n');
  });

  it('README.md links every file under docs/', () => {
    const linked = new Set(linkTargets('README.md').map((target) => localTarget('README.md', target)));
    const files = filesUnder('docs');
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((file) => !linked.has(file))).toEqual([]);
  });

  it.each(pages)('every relative link in %s leads to a file that exists', (page) => {
    const broken = linkTargets(page).filter((target) => {
      const path = localTarget(page, target);
      return path !== undefined && (path.startsWith('..') || !existsSync(join(repo, path)));
    });
    expect(broken).toEqual([]);
  });
});
