// Writes the README's annotation reference from the catalog (run through `npm run docs`, after a build).
import { readFileSync, writeFileSync } from 'node:fs';
import { withReference } from '../dist/src/report/annotation-reference.js';

const readme = new URL('../README.md', import.meta.url);
const updated = withReference(readFileSync(readme, 'utf8'));
if (updated === undefined) {
  console.error('README.md has no annotation-reference markers');
  process.exit(2);
}
writeFileSync(readme, updated);
