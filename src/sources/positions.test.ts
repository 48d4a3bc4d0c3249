import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Diagnostic, FieldPath } from '../model/diagnostics.js';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { readdirSync, readFileSync } from 'node:fs';
import { readInputs, splitYamlDocuments } from './files.js';
import { locateInBlockMappings, refinePositions } from './positions.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'i2n-positions-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Lines 1-18 hold a Service, line 19 is `---`, the Ingress document starts at line 20. */
const ingressFile = [
  'apiVersion: v1', // 1
  'kind: Service', // 2
  'metadata:', // 3
  '  name: backend', // 4
  '  namespace: shop', // 5
  'spec:', // 6
  '  ports:', // 7
  '    - name: https', // 8
  '      port: 443', // 9
  '      targetPort: 8443', // 10
  '  selector:', // 11
  '    app: backend', // 12
  '# padding', // 13
  '# padding', // 14
  '# padding', // 15
  '# padding', // 16
  '# padding', // 17
  '', // 18
  '---', // 19
  'apiVersion: networking.k8s.io/v1', // 20
  'kind: Ingress', // 21
  'metadata:', // 22
  '  name: web', // 23
  '  namespace: shop', // 24
  '  annotations:', // 25
  '    nginx.ingress.kubernetes.io/backend-protocol: HTTPS', // 26
  '    nginx.ingress.kubernetes.io/ssl-passthrough: "maybe"', // 27
  'spec:', // 28
  '  rules:', // 29
  '    - host: a.example.com', // 30
  '    - http:', // 31
  '        paths: []', // 32
  '      host: b.example.com', // 33
  '',
].join('\n');

const web = { kind: 'Ingress', namespace: 'shop', name: 'web' };

function about(file: string, line: number, path: FieldPath, resource = web): Diagnostic {
  return { severity: 'error', code: 'test', resource, file, line, path, message: 'test' };
}

describe('refinePositions', () => {
  it('finds an annotation key and a rule host in a document starting at line 20', async () => {
    const file = path.join(dir, 'ingress.yaml');
    await writeFile(file, ingressFile);
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(diagnostics).toEqual([]);
    expect(snapshot.objects[1]?.origin).toEqual({ file, line: 20 });

    const refined = await refinePositions(
      [
        about(file, 20, ['metadata', 'annotations', 'nginx.ingress.kubernetes.io/ssl-passthrough']),
        about(file, 20, ['spec', 'rules', 1, 'host']),
        about(file, 20, ['spec', 'rules', 0]),
      ],
      snapshot,
    );
    expect(refined.map((d) => [d.line, d.column])).toEqual([
      [27, 5],
      [33, 7],
      [30, 7],
    ]);
  });

  it('falls back to the deepest existing ancestor', async () => {
    const file = path.join(dir, 'ingress.yaml');
    await writeFile(file, ingressFile);
    const { snapshot } = await readInputs([file]);
    const refined = await refinePositions(
      [
        about(file, 20, ['spec', 'rules', 1, 'http', 'paths', 0, 'backend']),
        about(file, 20, ['spec', 'rules', 7, 'host']),
        about(file, 20, ['spec', 'tls', 0]),
        about(file, 20, ['metadata', 'name', 'deeper']),
      ],
      snapshot,
    );
    expect(refined.map((d) => [d.line, d.column])).toEqual([
      [32, 9],
      [29, 3],
      [28, 1],
      [23, 3],
    ]);
  });

  it('leaves diagnostics without a path or not at a document start untouched, and reads only files it needs', async () => {
    const file = path.join(dir, 'ingress.yaml');
    await writeFile(file, ingressFile);
    const { snapshot } = await readInputs([file]);
    const read: string[] = [];
    const readText = async (name: string): Promise<string> => {
      read.push(name);
      return readFile(name, 'utf8');
    };
    const unrelated: Diagnostic[] = [
      { severity: 'warning', code: 'no-path', resource: web, file, line: 20, message: 'x' },
      { severity: 'warning', code: 'no-file', resource: web, path: ['spec'], message: 'x' },
      about(file, 21, ['spec']),
      about(path.join(dir, 'other.yaml'), 1, ['spec']),
    ];
    expect(await refinePositions(unrelated.slice(0, 2), snapshot, readText)).toEqual(unrelated.slice(0, 2));
    expect(read).toEqual([]);
    expect(await refinePositions(unrelated, snapshot, readText)).toEqual(unrelated);
    expect(read).toEqual([file, path.join(dir, 'other.yaml')]);
  });

  it('prefixes the path of a List item with its index', async () => {
    const file = path.join(dir, 'list.yaml');
    await writeFile(
      file,
      [
        'apiVersion: v1', // 1
        'kind: List', // 2
        'items:', // 3
        '  - apiVersion: networking.k8s.io/v1', // 4
        '    kind: Ingress', // 5
        '    metadata: {name: first, namespace: shop}', // 6
        '    spec:', // 7
        '      rules: [{host: one.example.com}]', // 8
        '  - apiVersion: networking.k8s.io/v1', // 9
        '    kind: Ingress', // 10
        '    metadata:', // 11
        '      name: web', // 12
        '      namespace: shop', // 13
        '    spec:', // 14
        '      rules:', // 15
        '        - host: two.example.com', // 16
        '  - kind: Ingress', // 17
        '    metadata: {name: broken}', // 18
      ].join('\n'),
    );
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(snapshot.objects.map((o) => o.origin?.listIndex)).toEqual([0, 1]);
    expect(diagnostics).toMatchObject([{ code: 'resource-malformed', path: ['items', 2, 'apiVersion'] }]);

    const refined = await refinePositions(
      [
        about(file, 1, ['spec', 'rules', 0, 'host']),
        about(file, 1, ['spec', 'rules', 0, 'host'], { kind: 'Ingress', namespace: 'shop', name: 'first' }),
        ...diagnostics,
      ],
      snapshot,
    );
    expect(refined.map((d) => [d.line, d.column])).toEqual([
      [16, 11],
      [8, 16],
      // apiVersion is missing from items[2]: its item is the deepest ancestor.
      [17, 5],
    ]);
  });

  it('refines diagnostics about stdin from the text readInputs kept', async () => {
    const text = `# from a pipe\n---\n${ingressFile.split('\n').slice(19).join('\n')}`;
    const result = await readInputs(['-'], { stdin: Readable.from([text]) });
    const [ingress] = result.snapshot.objects;
    expect(ingress?.origin).toEqual({ file: '<stdin>', line: 3 });
    const [refined] = await refinePositions([about('<stdin>', 3, ['spec', 'rules', 1, 'host'])], result.snapshot, result.readText);
    expect(refined).toMatchObject({ file: '<stdin>', line: 16, column: 7 });
  });

  it('places a non-string annotation diagnostic on its key', async () => {
    const file = path.join(dir, 'ingress.yaml');
    await writeFile(file, ingressFile.replace('ssl-passthrough: "maybe"', 'ssl-passthrough: true'));
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(diagnostics).toMatchObject([{ code: 'annotation-not-string', line: 20 }]);
    const refined = await refinePositions(diagnostics, snapshot);
    expect(refined).toMatchObject([{ code: 'annotation-not-string', file, line: 27, column: 5 }]);
  });
  it('keeps the document line when the text read again is too deep to parse, and never throws', async () => {
    const file = path.join(dir, 'ingress.yaml');
    await writeFile(file, ingressFile);
    const { snapshot } = await readInputs([file]);
    // The file changed after it was read: the Ingress document now nests deeper than the parser's stack.
    const deepened = (depth: number): string =>
      ingressFile.replace('        paths: []', `        paths: ${'['.repeat(depth)}${']'.repeat(depth)}`);
    const diagnostic = about(file, 20, ['spec', 'rules', 1, 'host']);
    for (const text of [deepened(1000), deepened(100_000)]) {
      await expect(refinePositions([diagnostic], snapshot, async () => text)).resolves.toEqual([diagnostic]);
    }
    // Unchanged, the same diagnostic is refined.
    await expect(refinePositions([diagnostic], snapshot, async () => ingressFile)).resolves.toMatchObject([{ line: 33, column: 7 }]);
  });
});

/** Every key of every mapping reachable through mappings only, with the 1-based line and column the yaml parser gives it. */
function keyPositions(text: string): { path: string[]; line: number; column: number }[] {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  const found: { path: string[]; line: number; column: number }[] = [];
  const walk = (node: unknown, path: string[]) => {
    if (!isMap(node)) return;
    for (const pair of node.items) {
      if (!isScalar(pair.key) || pair.key.range === undefined || pair.key.range === null) continue;
      const keyPath = [...path, String(pair.key.value)];
      const position = lineCounter.linePos(pair.key.range[0]);
      found.push({ path: keyPath, line: position.line, column: position.col });
      walk(pair.value, keyPath);
    }
  };
  walk(document.contents, []);
  return found;
}

describe('locating a key from the lines alone', () => {
  const manifests = ['fixtures', 'examples'].flatMap((root) =>
    readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.ya?ml$/.test(file) && !file.includes('expected'))
      .map((file) => path.join(root, file)),
  );
  const tricky = [
    'a: "first\nb: inside the quoted value"\nc: 1\n',
    "a: 'first\nb: inside'\nc: 1\n",
    '~: null key\nTrue: yes\n1: one\nkey: plain\n',
    'metadata:\n  annotations: &shared\n    x: 1\nspec:\n  copy: *shared\n',
    'metadata: {name: a, annotations: {x: "1"}}\n',
    '? complex\n: value\nafter: 1\n',
    'metadata:\n  labels:\n    a: b\n  annotations:\n    "quoted/key": x\n    \'single\': y\n    plain: "x # not a comment"\n    spaced : z\n',
    '%YAML 1.2\n---\nkind: Ingress\n',
    '---\n# comment\nkind: Ingress\nmetadata:\n  # comment\n  name: a\n',
    'metadata:\r\n  name: crlf\r\n  annotations:\r\n    x: "1"\r\n',
    'metadata:\n\tname: tab\n',
    'data:\n  script: |\n    metadata:\n      name: not this\n  name: this\n',
    'list:\n- a: 1\nmetadata:\n  name: after a compact sequence\n',
  ];
  const documents = [
    ...manifests.flatMap((file) => [...splitYamlDocuments(readFileSync(file, 'utf8'))].map((document) => ({ where: file, text: document.text }))),
    ...tricky.map((text, index) => ({ where: `tricky ${index}`, text })),
  ];

  it('finds the key the yaml parser finds, or leaves it to the parser', () => {
    let checked = 0;
    let located = 0;
    for (const { where, text } of documents) {
      for (const expected of keyPositions(text)) {
        checked++;
        const fast = locateInBlockMappings(text, expected.path);
        if (fast === undefined) continue;
        located++;
        expect(fast, `${where}: ${expected.path.join('.')}`).toEqual({ line: expected.line, column: expected.column });
      }
    }
    // Most keys of real manifests are found from the lines: the check above is not vacuous.
    expect(located).toBeGreaterThan(checked * 0.8);
  });

  it('never answers for a key that is not there, or one inside a value', () => {
    expect(locateInBlockMappings('metadata:\n  name: a\n', ['metadata', 'labels'])).toBeUndefined();
    expect(locateInBlockMappings('data:\n  script: |\n    name: inside\n', ['data', 'name'])).toBeUndefined();
    expect(locateInBlockMappings('a: "x\nb: y"\n', ['b'])).toBeUndefined();
    // The parser reads this key as the number 16: its text is not its name.
    expect(locateInBlockMappings('kind: x\n0x10: a\n', ['0x10'])).toBeUndefined();
    expect(locateInBlockMappings('metadata:\n  annotations:\n    x: "1"\n', ['metadata', 'annotations', 'x'])).toEqual({ line: 3, column: 5 });
  });
});
