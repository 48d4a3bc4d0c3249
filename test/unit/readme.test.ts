import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { annotationReference, referenceBegin, referenceEnd } from '../../src/report/annotation-reference.js';
import { annotationCatalog } from '../../src/translate/ingress/annotations/catalog.js';

/** The README's annotation reference is generated from the catalog: a change to one without the other fails here. */

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

describe('README annotation reference', () => {
  it('is what `npm run docs` generates from the catalog', () => {
    const begin = readme.indexOf(referenceBegin);
    const end = readme.indexOf(referenceEnd);
    expect(begin, 'README.md has no annotation-reference markers').toBeGreaterThan(-1);
    expect(readme.slice(begin, end + referenceEnd.length), 'README.md is out of date: run `npm run docs`').toBe(annotationReference());
  });

  it('lists every annotation of the catalog once', () => {
    for (const entry of annotationCatalog) expect(annotationReference()).toContain(`| \`${entry.name}\` |`);
  });
});
