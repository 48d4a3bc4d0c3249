/**
 * The annotation reference of docs/annotations.md, generated from the catalog (`npm run docs` writes it;
 * a test fails when the page and the catalog disagree), so the table users read is the table the parser
 * uses.
 */
import { annotationCatalog, configMapCatalog, type AnnotationEntry, type CatalogStatus } from '../translate/ingress/annotations/catalog.js';

export const referenceBegin = '<!-- annotation-reference:begin (generated from src/translate/ingress/annotations/catalog.ts by `npm run docs`; do not edit) -->';
export const referenceEnd = '<!-- annotation-reference:end -->';

const statusWords: Record<CatalogStatus, string> = {
  supported: 'supported',
  differs: '**differs**',
  ignored: 'ignored (warning)',
  refused: '**refused** (error)',
};

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** The reference in Markdown, between the markers. */
export function annotationReference(): string {
  const families = new Map<string, AnnotationEntry[]>();
  for (const entry of annotationCatalog) families.set(entry.section, [...(families.get(entry.section) ?? []), entry]);
  const count = (status: CatalogStatus) => annotationCatalog.filter((entry) => entry.status === status).length;
  const lines = [
    referenceBegin,
    '',
    `${annotationCatalog.length} ingress-nginx annotations (prefix \`nginx.ingress.kubernetes.io/\`): ${count('supported')} supported as in ingress-nginx, ` +
      `${count('differs')} supported with a difference on purpose (an info diagnostic says so at the Ingress), ${count('ignored')} ignored with a ` +
      `warning, ${count('refused')} refused with an error that leaves the Ingress out. Names not listed here get an \`annotation-unknown\` warning.`,
  ];
  for (const [family, entries] of families) {
    lines.push('', `### ${family}`, '', '| annotation | status | default | what ingress2nginx does |', '|---|---|---|---|');
    for (const entry of [...entries].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      lines.push(`| \`${entry.name}\` | ${statusWords[entry.status]} | ${cell(entry.defaultValue)} | ${cell(entry.note)} |`);
    }
  }
  lines.push(
    '',
    '### ConfigMap keys',
    '',
    'Keys of the controller ConfigMap (`--configmap`) that ingress2nginx reads; every other key gets an info diagnostic and has no effect.',
    '',
    '| key | status | default | notes |',
    '|---|---|---|---|',
  );
  for (const entry of configMapCatalog) lines.push(`| \`${entry.key}\` | ${statusWords[entry.status]} | ${cell(entry.defaultValue)} | ${cell(entry.note)} |`);
  lines.push('', referenceEnd);
  return lines.join('\n');
}

/** `page` (the text of docs/annotations.md) with the reference between the markers replaced; undefined when the markers are missing. */
export function withReference(page: string): string | undefined {
  const begin = page.indexOf(referenceBegin);
  const end = page.indexOf(referenceEnd);
  if (begin === -1 || end === -1 || end < begin) return undefined;
  return page.slice(0, begin) + annotationReference() + page.slice(end + referenceEnd.length);
}
