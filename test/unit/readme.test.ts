import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { annotationReference, referenceBegin, referenceEnd } from '../../src/report/annotation-reference.js';
import { annotationCatalog } from '../../src/translate/ingress/annotations/catalog.js';

/** The annotation reference in docs/annotations.md is generated from the catalog: a change to one without the other fails here. */

const page = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'annotations.md'), 'utf8');

describe('docs/annotations.md annotation reference', () => {
  it('is what `npm run docs` generates from the catalog', () => {
    const begin = page.indexOf(referenceBegin);
    const end = page.indexOf(referenceEnd);
    expect(begin, 'docs/annotations.md has no annotation-reference markers').toBeGreaterThan(-1);
    expect(page.slice(begin, end + referenceEnd.length), 'docs/annotations.md is out of date: run `npm run docs`').toBe(annotationReference());
  });

  it('lists every annotation of the catalog once', () => {
    for (const entry of annotationCatalog) expect(annotationReference()).toContain(`| \`${entry.name}\` |`);
  });
});
