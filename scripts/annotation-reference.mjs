// Writes the annotation reference of docs/annotations.md from the catalog (run through `npm run docs`, after a build).
import { readFileSync, writeFileSync } from 'node:fs';
import { withReference } from '../dist/src/report/annotation-reference.js';

const page = new URL('../docs/annotations.md', import.meta.url);
const updated = withReference(readFileSync(page, 'utf8'));
if (updated === undefined) {
  console.error('docs/annotations.md has no annotation-reference markers');
  process.exit(2);
}
writeFileSync(page, updated);
