import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InputError, readInputs, splitYamlDocuments } from './files.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'i2n-files-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(relative: string, text: string): Promise<string> {
  const file = path.join(dir, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  return file;
}

function configMap(name: string, extra = ''): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}`;
}

describe('splitYamlDocuments', () => {
  it('splits on markers at column 0 only, keeping comments before --- with their document', () => {
    const text = [
      '# leading comment', // 1
      '---', // 2
      'a: 1', // 3
      'b: |', // 4
      '  --- not a marker', // 5
      '---', // 6
      '# only a comment', // 7
      '--- # empty document', // 8
      '', // 9
      '--- !!map', // 10
      'c: 3', // 11
      '...', // 12
      '%YAML 1.2', // 13
      '---', // 14
      'd: 4', // 15
      '---x: 5', // 16 (a key, not a marker)
    ].join('\n');
    const documents = [...splitYamlDocuments(text)];
    expect(documents.map((d) => [d.textLine, d.line])).toEqual([
      [1, 3],
      [10, 10],
      [13, 15],
    ]);
    expect(documents[0]?.text).toBe('# leading comment\n---\na: 1\nb: |\n  --- not a marker\n');
    expect(documents[2]?.text).toBe('%YAML 1.2\n---\nd: 4\n---x: 5');
  });

  it('handles CRLF line endings and a byte order mark', () => {
    const documents = [...splitYamlDocuments('\uFEFFa: 1\r\n---\r\nb: 2\r\n')];
    expect(documents.map((d) => [d.textLine, d.line, d.text])).toEqual([
      [1, 1, 'a: 1\r\n'],
      [2, 3, '---\r\nb: 2\r\n'],
    ]);
  });
});

describe('readInputs', () => {
  it('reads multi-document YAML with the first content line of each document', async () => {
    const file = await write(
      'multi.yaml',
      [
        '# comment', // 1
        '---', // 2
        configMap('one').trimEnd(), // 3-6
        '---', // 7
        '---', // 8 (empty document)
        '', // 9
        configMap('two').trimEnd(), // 10-13
        '...', // 14
        '---', // 15
        configMap('three').trimEnd(), // 16-19
      ].join('\n'),
    );
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(diagnostics).toEqual([]);
    expect(snapshot.objects.map((o) => [o.metadata.name, o.origin])).toEqual([
      ['one', { file, line: 3 }],
      ['two', { file, line: 10 }],
      ['three', { file, line: 16 }],
    ]);
  });

  it('reads a JSON file, tab-indented', async () => {
    const file = await write(
      'ing.json',
      '{\n\t"apiVersion": "networking.k8s.io/v1",\n\t"kind": "Ingress",\n\t"metadata": {\n\t\t"name": "web",\n\t\t"labels": {"app": "web"}\n\t},\n\t"spec": {"rules": [{"host": "a.example.com"}]}\n}\n',
    );
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(diagnostics).toEqual([]);
    expect(snapshot.objects).toHaveLength(1);
    const [ingress] = snapshot.objects;
    expect(ingress?.kind).toBe('Ingress');
    expect(ingress?.metadata).toEqual({
      name: 'web',
      namespace: 'default',
      annotations: {},
      labels: { app: 'web' },
      creationTimestamp: '',
    });
    expect(ingress?.raw.spec).toEqual({ rules: [{ host: 'a.example.com' }] });
    expect(ingress?.origin).toEqual({ file, line: 1 });
  });

  it('expands List and *List kinds into their items', async () => {
    const file = await write(
      'list.yaml',
      `apiVersion: v1
kind: List
items:
  - ${configMap('a').replaceAll('\n', '\n    ')}
  - ${configMap('b').replaceAll('\n', '\n    ')}
---
apiVersion: networking.k8s.io/v1
kind: IngressList
metadata: {resourceVersion: "7"}
items:
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata: {name: c, namespace: web}
`,
    );
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(diagnostics).toEqual([]);
    expect(snapshot.objects.map((o) => [o.kind, o.metadata.namespace, o.metadata.name, o.origin])).toEqual([
      ['ConfigMap', 'default', 'a', { file, line: 1, listIndex: 0 }],
      ['ConfigMap', 'default', 'b', { file, line: 1, listIndex: 1 }],
      ['Ingress', 'web', 'c', { file, line: 15, listIndex: 0 }],
    ]);
    expect(snapshot.objects[2]?.raw).toEqual({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'c', namespace: 'web' },
    });
  });

  it('walks directories in path order, taking only manifest extensions and skipping dot-directories', async () => {
    await write('b/c.yml', configMap('b-c'));
    await write('b-x.json', '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b-x"}}');
    await write('a.yaml', configMap('a'));
    await write('b/d/e.yaml', configMap('b-d-e'));
    await write('notes.txt', configMap('txt'));
    await write('README.md', configMap('md'));
    await write('.git/config.yaml', configMap('git'));
    // A mounted ConfigMap: visible names are symlinks into a dot-directory.
    await write('mounted/..data/m.yaml', configMap('mounted'));
    await symlink('..data/m.yaml', path.join(dir, 'mounted', 'm.yaml'));
    await symlink('missing.yaml', path.join(dir, 'dangling.yaml'));

    const { snapshot, diagnostics } = await readInputs([dir]);
    expect(diagnostics).toEqual([]);
    expect(snapshot.objects.map((o) => [o.metadata.name, path.relative(dir, o.origin?.file ?? '')])).toEqual([
      ['a', 'a.yaml'],
      ['b-x', 'b-x.json'],
      ['b-c', 'b/c.yml'],
      ['b-d-e', 'b/d/e.yaml'],
      ['mounted', 'mounted/m.yaml'],
    ]);
  });

  it('takes an explicitly named file whatever its extension, and inputs in the given order', async () => {
    const second = await write('z.yaml', configMap('z'));
    const first = await write('manifest.txt', configMap('txt'));
    const { snapshot } = await readInputs([first, second]);
    expect(snapshot.objects.map((o) => o.metadata.name)).toEqual(['txt', 'z']);
  });

  it('reads stdin for - and keeps its text for later position lookups', async () => {
    const text = `---\n${configMap('from-stdin')}`;
    const file = await write('f.yaml', configMap('from-file'));
    const result = await readInputs([file, '-'], { stdin: Readable.from([Buffer.from(text.slice(0, 10)), text.slice(10)]) });
    expect(result.snapshot.objects.map((o) => [o.metadata.name, o.origin])).toEqual([
      ['from-file', { file, line: 1 }],
      ['from-stdin', { file: '<stdin>', line: 2 }],
    ]);
    await expect(result.readText('<stdin>')).resolves.toBe(text);
    await expect(result.readText(file)).resolves.toBe(configMap('from-file'));
  });

  it('throws InputError for a nonexistent path', async () => {
    const missing = path.join(dir, 'nope.yaml');
    await expect(readInputs([missing])).rejects.toThrow(InputError);
    await expect(readInputs([missing])).rejects.toThrow(/nope\.yaml: no such file or directory/);
  });

  it('reports malformed YAML at its exact line and column and still loads the other documents', async () => {
    const file = await write(
      'broken.yaml',
      [
        configMap('before').trimEnd(), // 1-4
        '---', // 5
        'apiVersion: v1', // 6
        'kind: ConfigMap', // 7
        'metadata:', // 8
        '  name: broken', // 9
        'data:', // 10
        '  key: "unterminated', // 11
        '  other: [1, 2', // 12
        '---', // 13
        configMap('after'), // 14-17
      ].join('\n'),
    );
    const other = await write('other.yaml', configMap('other'));
    const { snapshot, diagnostics } = await readInputs([file, other]);
    expect(snapshot.objects.map((o) => o.metadata.name)).toEqual(['before', 'after', 'other']);
    expect(snapshot.objects[1]?.origin).toEqual({ file, line: 14 });
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ severity: 'error', code: 'yaml-syntax', file, line: 13, column: 1 });
    expect(diagnostics[0]?.message).toMatch(/unexpected end of the stream within a double quoted scalar/);
  });

  it('reports the column of a syntax error inside a line', async () => {
    // Line 9 is `data: {a: 1, b}: c`; the parser stops at the second `:` (column 16).
    const file = await write('inline.yaml', `${configMap('ok')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: 1, b}: c\n`);
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(snapshot.objects.map((o) => o.metadata.name)).toEqual(['ok']);
    expect(diagnostics).toEqual([
      {
        severity: 'error',
        code: 'yaml-syntax',
        file,
        line: 9,
        column: 16,
        message: 'invalid YAML: bad indentation of a mapping entry; the document is skipped',
      },
    ]);
  });

  it('reports a duplicated key as a syntax error', async () => {
    const file = await write('dup.yaml', `${configMap('dup')}  name: again\n`);
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(snapshot.objects).toEqual([]);
    expect(diagnostics).toMatchObject([{ code: 'yaml-syntax', line: 5, message: expect.stringMatching(/duplicated mapping key/) }]);
  });

  it('reports documents that are not Kubernetes objects and skips them', async () => {
    const file = await write(
      'bad.yaml',
      [
        '- just', // 1
        '- a list', // 2
        '---', // 3
        'kind: ConfigMap', // 4
        'metadata:', // 5
        '  namespace: x', // 6
        '---', // 7
        'apiVersion: v1', // 8
        'kind: List', // 9
        'items:', // 10
        '  - apiVersion: v1', // 11
        '    kind: Secret', // 12
        '    metadata: {name: s}', // 13
        '  - hello', // 14
        '---', // 15
        configMap('good'), // 16
      ].join('\n'),
    );
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(snapshot.objects.map((o) => [o.kind, o.metadata.name, o.origin?.listIndex])).toEqual([
      ['Secret', 's', 0],
      ['ConfigMap', 'good', undefined],
    ]);
    expect(diagnostics).toEqual([
      {
        severity: 'error',
        code: 'resource-malformed',
        file,
        line: 1,
        message: 'skipped document: it is a list, not a mapping',
      },
      {
        severity: 'error',
        code: 'resource-malformed',
        file,
        line: 4,
        field: 'apiVersion',
        path: ['apiVersion'],
        message: 'skipped document: missing apiVersion, missing metadata.name',
      },
      {
        severity: 'error',
        code: 'resource-malformed',
        file,
        line: 8,
        field: 'items[1]',
        path: ['items', 1],
        message: 'skipped List item items[1]: it is the string "hello", not a mapping',
      },
    ]);
  });

  it('drops non-string annotations and labels with a diagnostic telling to quote them', async () => {
    const file = await write(
      'ann.yaml',
      `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  labels:
    tier: 1
    app: web
  annotations:
    nginx.ingress.kubernetes.io/ssl-passthrough: true
    nginx.ingress.kubernetes.io/backend-protocol: HTTPS
    empty:
`,
    );
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(snapshot.objects[0]?.metadata.annotations).toEqual({
      'nginx.ingress.kubernetes.io/backend-protocol': 'HTTPS',
      empty: '',
    });
    expect(snapshot.objects[0]?.metadata.labels).toEqual({ app: 'web' });
    expect(diagnostics).toEqual([
      {
        severity: 'error',
        code: 'annotation-not-string',
        resource: { kind: 'Ingress', namespace: 'shop', name: 'web' },
        file,
        line: 1,
        field: 'metadata.annotations["nginx.ingress.kubernetes.io/ssl-passthrough"]',
        path: ['metadata', 'annotations', 'nginx.ingress.kubernetes.io/ssl-passthrough'],
        message:
          'annotation nginx.ingress.kubernetes.io/ssl-passthrough is the boolean true, not a string; quote the value, e.g. nginx.ingress.kubernetes.io/ssl-passthrough: "true" (kubectl would refuse it too); the annotation is ignored',
      },
      {
        severity: 'error',
        code: 'label-not-string',
        resource: { kind: 'Ingress', namespace: 'shop', name: 'web' },
        file,
        line: 1,
        field: 'metadata.labels.tier',
        path: ['metadata', 'labels', 'tier'],
        message:
          'label tier is the number 1, not a string; quote the value, e.g. tier: "1" (kubectl would refuse it too); the label is ignored',
      },
    ]);
  });

  it('defaults the namespace for namespaced kinds and clears it for cluster-scoped kinds', async () => {
    const file = await write(
      'ns.yaml',
      `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: a}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx, namespace: ignored}
---
apiVersion: v1
kind: Service
metadata: {name: b, namespace: shop}
`,
    );
    const { snapshot } = await readInputs([file]);
    expect(snapshot.objects.map((o) => [o.kind, o.metadata.namespace])).toEqual([
      ['Ingress', 'default'],
      ['IngressClass', ''],
      ['Service', 'shop'],
    ]);
  });

  it('keeps YAML 1.1 booleans and timestamps as strings and applies merge keys', async () => {
    const file = await write(
      'scalars.yaml',
      `apiVersion: v1
kind: ConfigMap
metadata:
  name: s
  creationTimestamp: 2024-01-01T00:00:00Z
  uid: 9d3c
  resourceVersion: "42"
base: &base {port: 80, tls: yes}
data: {a: yes, b: no, c: on, d: off, e: y, f: true, <<: *base}
`,
    );
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(diagnostics).toEqual([]);
    const [object] = snapshot.objects;
    expect(object?.metadata.creationTimestamp).toBe('2024-01-01T00:00:00Z');
    expect(object?.metadata.uid).toBe('9d3c');
    expect(object?.metadata.resourceVersion).toBe('42');
    expect(object?.raw.data).toEqual({ a: 'yes', b: 'no', c: 'on', d: 'off', e: 'y', f: true, port: 80, tls: 'yes' });
  });

  it('returns diagnostics sorted by file and line', async () => {
    const second = await write('b.yaml', 'a: [\n');
    const first = await write('a.yaml', `${configMap('x')}---\nkind: X\n---\nfoo: [\n`);
    const { diagnostics } = await readInputs([second, first]);
    expect(diagnostics.map((d) => [path.basename(d.file ?? ''), d.line, d.code])).toEqual([
      ['a.yaml', 6, 'resource-malformed'],
      ['a.yaml', 9, 'yaml-syntax'],
      ['b.yaml', 2, 'yaml-syntax'],
    ]);
  });
  it('skips a document whose aliases expand too far, and still loads the other documents', async () => {
    const lols = ['  - &l0 "lol"'];
    for (let level = 1; level <= 9; level++) lols.push(`  - &l${level} [${Array(10).fill(`*l${level - 1}`).join(', ')}]`);
    const file = await write(
      'lol.yaml',
      [
        configMap('before').trimEnd(), // 1-4
        '---', // 5
        'apiVersion: v1', // 6
        'kind: ConfigMap', // 7
        'metadata: {name: lol}', // 8
        'lols:', // 9
        ...lols, // 10-19
        'data: {bomb: *l9}', // 20
        '---', // 21
        configMap('after').trimEnd(), // 22-25
      ].join('\n'),
    );
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(snapshot.objects.map((o) => o.metadata.name)).toEqual(['before', 'after']);
    expect(diagnostics).toMatchObject([{ severity: 'error', code: 'yaml-alias-limit', file, line: 6 }]);
    expect(diagnostics[0]?.message).toMatch(/aliases expand it by more than 500,000 characters.*; the document is skipped$/);
  });

  it('skips a document nested too deep at the line where it gets too deep, and still loads the other documents', async () => {
    const file = await write(
      'deep.yaml',
      [
        configMap('before').trimEnd(), // 1-4
        '---', // 5
        configMap('deep').trimEnd(), // 6-9
        'data:', // 10
        `  deep: ${'['.repeat(1000)}${']'.repeat(1000)}`, // 11
        '---', // 12
        configMap('after').trimEnd(), // 13-16
      ].join('\n'),
    );
    const { snapshot, diagnostics } = await readInputs([file]);
    expect(snapshot.objects.map((o) => o.metadata.name)).toEqual(['before', 'after']);
    expect(diagnostics).toEqual([
      {
        severity: 'error',
        code: 'yaml-too-deep',
        file,
        line: 11,
        column: 263,
        message: 'the document is nested more than 256 levels deep; that is the most ingress2nginx reads; the document is skipped',
      },
    ]);
  });
});
