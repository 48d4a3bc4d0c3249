import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { loadYamlDocument, mayHaveAlias, yamlLimits, type YamlLoad } from './yaml-load.js';

/** The oracle: plain js-yaml with the schema the sources use, without any limits. */
const manifestSchema = yaml.CORE_SCHEMA.extend({
  implicit: [new yaml.Type('tag:yaml.org,2002:merge', { kind: 'scalar', resolve: (data) => data === '<<' })],
});

function value(loaded: YamlLoad): unknown {
  if (!loaded.ok) throw new Error(`${loaded.problem.code}: ${loaded.problem.message}`);
  return loaded.value;
}

function problem(loaded: YamlLoad) {
  if (loaded.ok) throw new Error('the document was loaded');
  return loaded.problem;
}

/** Lines `&l0` … `&lN`, each a list of `fanout` aliases of the one before: `fanout^N` leaves. */
function billionLaughs(levels: number, fanout: number): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: lol}', 'lols:', '  - &l0 "lol"'];
  for (let level = 1; level <= levels; level++) {
    lines.push(`  - &l${level} [${Array.from({ length: fanout }, () => `*l${level - 1}`).join(', ')}]`);
  }
  lines.push(`data: {bomb: *l${levels}}`);
  return lines.join('\n') + '\n';
}

const nestedSequences = (depth: number, leaf = 'x'): string => '['.repeat(depth) + leaf + ']'.repeat(depth);

describe('mayHaveAlias', () => {
  it('is true wherever js-yaml can read an alias', () => {
    for (const text of [
      '*a',
      '\uFEFF*a',
      'k: *a',
      'k:\t*a',
      '- *a',
      '? *a\n: v',
      '[*a]',
      '[x,*a]',
      '{k: *a}',
      '{"k":*a}',
      'k:\n*a',
      'k:\r*a',
      '<<: [*a, *b]',
    ]) {
      expect(mayHaveAlias(text), JSON.stringify(text)).toBe(true);
    }
  });

  it('is false for the usual stars of manifests that are not aliases', () => {
    for (const text of [
      'host: "*.example.com"',
      "host: '*.example.com'",
      'path: /api/*',
      'regex: ^/v1/.*$',
      'glob: a*b',
      'note: * not a name',
      'pattern: [*]',
      'end: *',
      'calc: 2*3',
    ]) {
      expect(mayHaveAlias(text), JSON.stringify(text)).toBe(false);
    }
  });
});

describe('loadYamlDocument', () => {
  it('gives the same objects as js-yaml for anchors, aliases and << merge keys', () => {
    const documents = [
      'base: &base {port: 80, tls: yes}\ndata: {a: yes, <<: *base}\n',
      // An explicit key wins over a merged one, whatever the order; the first merge source wins over later ones.
      'a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nc: {x: 0, <<: [*a, *b]}\nd: {<<: *b, <<: *a, z: 3}\n',
      'defaults: &defaults\n  image: nginx\n  ports: [80, 443]\nitems:\n  - <<: *defaults\n    name: one\n  - <<: *defaults\n    name: two\n    ports: [8080]\n',
      'list: &l [1, 2]\nsame: *l\nscalar: &s text\ncopy: *s\nnested: {deeper: [*l, *s]}\n',
      'key: &k name\n*k : value\n',
      'items:\n  - &item {kind: ConfigMap, metadata: {name: a}}\n  - *item\n  - {<<: *item, metadata: {name: b}}\n',
    ];
    for (const text of documents) {
      expect(mayHaveAlias(text)).toBe(true);
      expect(value(loadYamlDocument(text)), text).toEqual(yaml.load(text, { schema: manifestSchema }));
    }
  });

  it('takes hundreds of aliases in a document', () => {
    const lines = ['defaults: &defaults {image: nginx, pullPolicy: IfNotPresent, resources: {cpu: 100m, memory: 128Mi}}', 'items:'];
    for (let i = 0; i < 500; i++) lines.push(`  - {<<: *defaults, name: item-${i}}`, `  - *defaults`);
    const loaded = value(loadYamlDocument(lines.join('\n'))) as { items: Record<string, unknown>[] };
    expect(loaded.items).toHaveLength(1000);
    expect(loaded.items[998]).toEqual({ image: 'nginx', pullPolicy: 'IfNotPresent', resources: { cpu: '100m', memory: '128Mi' }, name: 'item-499' });
  });

  it('refuses a billion laughs, whose aliases expand past the limit', () => {
    const text = billionLaughs(9, 10);
    expect(problem(loadYamlDocument(text))).toEqual({
      code: 'yaml-alias-limit',
      message: `the document's aliases expand it by more than 500,000 characters, the most ingress2nginx reads (an alias bomb?); write the values out or use fewer aliases`,
    });
  });

  it('allows aliases up to the expansion limit and refuses them one step past it', () => {
    // Each alias of `&big` adds its expanded size (one for the list, two per entry) and two for its own entry.
    const entries = 1000;
    const aliasCost = 1 + 2 * entries + 2;
    const fitting = Math.floor(yamlLimits.aliasExpansion / aliasCost);
    const document = (aliases: number): string =>
      `big: &big [${Array.from({ length: entries }, () => 'x').join(',')}]\nuses: [${Array.from({ length: aliases }, () => '*big').join(',')}]\n`;
    expect(loadYamlDocument(document(fitting)).ok).toBe(true);
    expect(problem(loadYamlDocument(document(fitting + 2))).code).toBe('yaml-alias-limit');
  });

  it('counts every << merge, also repeated keys of one mapping', () => {
    // js-yaml copies every key of `big` once per merge while parsing; measured on one merge only, this
    // document would pass and cost 2,000 × 20,000 key copies.
    const big = `big: &big {${Array.from({ length: 20_000 }, (_, i) => `k${i}: 1`).join(', ')}}`;
    const text = `${big}\nmerged: {${Array.from({ length: 2000 }, () => '<<: *big').join(', ')}}\n`;
    expect(problem(loadYamlDocument(text)).code).toBe('yaml-alias-limit');
  });

  it('refuses a document that spells out the key a merge stands for while measuring, instead of missing the merge', () => {
    const text = 'a: &a {x: 1}\nb: {<<: *a, "<<\\u00000": 1}\n';
    expect(problem(loadYamlDocument(text))).toMatchObject({ code: 'yaml-syntax', message: 'invalid YAML: duplicated mapping key' });
  });

  it('refuses more aliases than the count limit, however small', () => {
    const text = `empty: &e []\nuses: [${Array.from({ length: yamlLimits.aliases + 1 }, () => '*e').join(',')}]\n`;
    expect(problem(loadYamlDocument(text))).toEqual({
      code: 'yaml-alias-limit',
      message: 'the document has more than 10,000 aliases of mappings and sequences, the most ingress2nginx reads; write the values out or use fewer aliases',
    });
    const fitting = `empty: &e []\nuses: [${Array.from({ length: yamlLimits.aliases }, () => '*e').join(',')}]\n`;
    expect(loadYamlDocument(fitting).ok).toBe(true);
  });

  it('refuses an alias inside the node it refers to', () => {
    for (const text of ['&a [*a]', 'a: &a {b: [1, {c: *a}]}']) {
      expect(problem(loadYamlDocument(text))).toEqual({
        code: 'yaml-alias-cycle',
        message: 'an alias in the document refers to a node that contains it, so the document never ends',
      });
    }
  });

  it('refuses nesting past the limit, counting nodes from the root to the deepest leaf (js-yaml: one more at the root)', () => {
    // `depth - 2` sequences and their scalar are `depth - 1` nodes; js-yaml reads a flow collection at
    // the root one level down, while it looks for a mapping key.
    expect(value(loadYamlDocument(nestedSequences(yamlLimits.depth - 2)))).toBeInstanceOf(Array);
    expect(value(loadYamlDocument(`k: ${nestedSequences(yamlLimits.depth - 2)}`))).toBeInstanceOf(Object);
    expect(problem(loadYamlDocument(nestedSequences(yamlLimits.depth - 1)))).toEqual({
      code: 'yaml-too-deep',
      message: 'the document is nested more than 256 levels deep; that is the most ingress2nginx reads',
      mark: { line: 0, column: 255 },
    });
    const block = Array.from({ length: 300 }, (_, level) => `${' '.repeat(level)}k:`).join('\n');
    expect(problem(loadYamlDocument(block))).toMatchObject({ code: 'yaml-too-deep', mark: { line: 255 } });
  });

  it('refuses nesting past the limit with js-yaml never going deeper than the limit, at any depth', () => {
    for (const text of [nestedSequences(100_000), `k:\n  ${'- '.repeat(100_000)}x`, '{a: '.repeat(100_000) + '1' + '}'.repeat(100_000)]) {
      expect(problem(loadYamlDocument(text)).code).toBe('yaml-too-deep');
    }
  });

  it('refuses nesting that passes the limit only once aliases are expanded', () => {
    const half = Math.ceil(yamlLimits.depth / 2);
    const text = `a: &a ${nestedSequences(half)}\nb: ${nestedSequences(half, '*a')}\n`;
    expect(value(loadYamlDocument(`a: &a ${nestedSequences(half)}\n`))).toBeDefined();
    expect(problem(loadYamlDocument(text))).toEqual({
      code: 'yaml-too-deep',
      message: 'the document is nested more than 256 levels deep once its aliases are expanded; that is the most ingress2nginx reads',
    });
  });

  it('reports syntax errors with their mark', () => {
    expect(problem(loadYamlDocument('a: [1, 2\n'))).toMatchObject({ code: 'yaml-syntax', mark: { line: 1, column: 0 } });
    expect(problem(loadYamlDocument('a: *nope\n'))).toMatchObject({ code: 'yaml-syntax', message: 'invalid YAML: unidentified alias "nope"' });
  });
});
