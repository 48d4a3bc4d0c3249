import { managedFolders } from '../../src/apply/write.js';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fixtureCases, fixturesRoot, goldenArgs } from '../support/golden.js';

/**
 * Output must not depend on how the input is arranged: document order, how documents are split over
 * files (multi-document YAML, single JSON objects, `kind: List`), and the key order of every mapping.
 * Permutations come from a seeded PRNG, so a failure reproduces exactly: the test name carries the seed.
 */

/** `inputs` holds deliberately malformed YAML, which cannot be loaded and re-arranged. */
const cases = fixtureCases.filter((name) => name !== 'inputs');
const permutationsPerCase = 6;

type Random = () => number;

/** mulberry32: a tiny 32-bit PRNG, good enough to pick permutations reproducibly. */
function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a string: turns a case name into a stable seed. */
function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

function randomInt(random: Random, below: number): number {
  return Math.floor(random() * below);
}

function shuffled<T>(items: readonly T[], random: Random): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

type KeyOrder = 'reverse' | 'shuffle';

/** A deep copy in which every mapping's keys are reversed or shuffled; list order is kept (it means something). */
function reorderKeys(value: unknown, order: KeyOrder, random: Random): unknown {
  if (Array.isArray(value)) return value.map((item) => reorderKeys(item, order, random));
  if (typeof value !== 'object' || value === null) return value;
  const keys = Object.keys(value);
  const reordered = order === 'reverse' ? [...keys].reverse() : shuffled(keys, random);
  const copy: Record<string, unknown> = {};
  for (const key of reordered) copy[key] = reorderKeys((value as Record<string, unknown>)[key], order, random);
  return copy;
}

/**
 * The YAML 1.2 core schema, as the file source reads manifests: timestamps and `yes`/`on` stay strings.
 * Dumping with it quotes every string that would otherwise read back as another type.
 */
const schema = yaml.CORE_SCHEMA;

async function loadDocuments(inputDir: string): Promise<unknown[]> {
  const documents: unknown[] = [];
  for (const entry of (await readdir(inputDir)).sort()) {
    if (!['.yaml', '.yml', '.json'].includes(extname(entry))) continue;
    for (const document of yaml.loadAll(await readFile(join(inputDir, entry), 'utf8'), null, { schema })) {
      if (document === null || document === undefined) continue;
      const list = document as { kind?: unknown; items?: unknown };
      if (typeof list.kind === 'string' && list.kind.endsWith('List') && Array.isArray(list.items)) documents.push(...list.items);
      else documents.push(document);
    }
  }
  return documents;
}

type FileFormat = 'yaml-stream' | 'yaml-list' | 'json-list' | 'json-single';

function asList(items: readonly unknown[]): unknown {
  return { apiVersion: 'v1', kind: 'List', items };
}

function serialize(documents: readonly unknown[], format: FileFormat): { extension: string; text: string } {
  const dump = (value: unknown) => yaml.dump(value, { schema, lineWidth: -1, noRefs: true });
  switch (format) {
    case 'yaml-stream':
      return { extension: 'yaml', text: documents.map((d) => `---\n${dump(d)}`).join('') };
    case 'yaml-list':
      return { extension: 'yml', text: dump(asList(documents)) };
    case 'json-list':
      return { extension: 'json', text: JSON.stringify(asList(documents), null, 2) };
    case 'json-single':
      return { extension: 'json', text: JSON.stringify(documents[0]) };
  }
}

interface Arrangement {
  readonly description: string;
  /** What to pass as `-f`: one directory, or every file (in random order). */
  readonly inputs: readonly string[];
  readonly formats: ReadonlySet<FileFormat>;
}

/**
 * Writes `documents` into `dir` shuffled, split into 1..4 files of mixed formats, keys reordered.
 * Groups of one document become a single JSON object or a one-document YAML stream; larger groups a
 * YAML stream, a YAML `kind: List` or a JSON `kind: List`, rotating so that each permutation mixes them.
 */
async function arrange(documents: readonly unknown[], dir: string, permutation: number, random: Random): Promise<Arrangement> {
  const keyOrder: KeyOrder = permutation % 2 === 0 ? 'reverse' : 'shuffle';
  const order = shuffled(documents, random).map((d) => reorderKeys(d, keyOrder, random));
  const fileCount = 1 + randomInt(random, Math.min(4, order.length));
  // Cut points: fileCount - 1 distinct positions in 1..n-1, so no file is empty.
  const cuts = shuffled(
    Array.from({ length: order.length - 1 }, (_, i) => i + 1),
    random,
  )
    .slice(0, fileCount - 1)
    .sort((a, b) => a - b);
  const bounds = [0, ...cuts, order.length];
  const groups = bounds.slice(0, -1).map((start, i) => order.slice(start, bounds[i + 1]));

  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  const formats = new Set<FileFormat>();
  const multi: FileFormat[] = ['yaml-stream', 'yaml-list', 'json-list'];
  for (const [index, group] of groups.entries()) {
    const format: FileFormat =
      group.length === 1
        ? random() < 0.5
          ? 'json-single'
          : 'yaml-stream'
        : (multi[(permutation + index) % multi.length] as FileFormat);
    formats.add(format);
    const { extension, text } = serialize(group, format);
    // Random names: directory order (sorted by name) is unrelated to the group order.
    const file = join(dir, `${randomInt(random, 1e6).toString(36)}-${index}.${extension}`);
    await writeFile(file, text);
    files.push(file);
  }
  const asDirectory = random() < 0.5;
  return {
    description: `${keyOrder} keys, ${groups.map((g) => g.length).join('+')} documents in ${[...formats].join(', ')}`,
    inputs: asDirectory ? [dir] : shuffled(files, random),
    formats,
  };
}

interface Rendered {
  readonly exitCode: number;
  readonly nginxConf: string;
  /** `folder/name` → contents, for tls/, ca/ and client/. */
  readonly keyFiles: Readonly<Record<string, string>>;
  /** severity, code, resource and message of each diagnostic, sorted; positions are left out on purpose. */
  readonly diagnostics: readonly string[];
  /** The Gateway API status section as JSON text. */
  readonly status: string;
}

interface JsonDiagnostic {
  severity: string;
  code: string;
  resource: unknown;
  message: string;
}

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'ingress2nginx-determinism-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

async function renderCase(name: string, inputs: readonly string[], output: string): Promise<Rendered> {
  const [first, ...more] = inputs;
  if (first === undefined) throw new Error('no input');
  // -f is repeatable anywhere on the command line.
  const result = await runCli([...goldenArgs(name, first, output), ...more.flatMap((i) => ['-f', i]), '--format', 'json']);
  expect(result.stderr).not.toContain('internal error');
  const keyFiles: Record<string, string> = {};
  for (const folder of managedFolders) {
    const dir = join(output, folder);
    if (!existsSync(dir)) continue;
    for (const file of (await readdir(dir)).sort()) keyFiles[`${folder}/${file}`] = await readFile(join(dir, file), 'utf8');
  }
  const report = JSON.parse(result.stdout) as { diagnostics: JsonDiagnostic[]; status: Record<string, unknown> };
  const diagnostics = report.diagnostics.map((d) => JSON.stringify([d.severity, d.code, d.resource, d.message])).sort();
  // Status is compared as text: key order and list order are part of what must not change.
  const status = JSON.stringify(report.status);
  return { exitCode: result.exitCode, nginxConf: await readFile(join(output, 'nginx.conf'), 'utf8'), keyFiles, diagnostics, status };
}

describe.each(cases)('fixture %s', (name) => {
  const seed = seedOf(name);

  it(`renders the same bytes, key files and diagnostics for ${permutationsPerCase} arrangements of its input (seed ${seed})`, async () => {
    const caseDir = join(workDir, name);
    const baseline = await renderCase(name, [join(fixturesRoot, name, 'input')], join(caseDir, 'baseline-out'));
    expect(baseline.nginxConf).toContain('http {');

    const documents = await loadDocuments(join(fixturesRoot, name, 'input'));
    expect(documents.length).toBeGreaterThan(1);
    const random = mulberry32(seed);
    const formatsSeen = new Set<FileFormat>();
    for (let permutation = 0; permutation < permutationsPerCase; permutation++) {
      const arrangement = await arrange(documents, join(caseDir, `p${permutation}`, 'in'), permutation, random);
      for (const format of arrangement.formats) formatsSeen.add(format);
      const rendered = await renderCase(name, arrangement.inputs, join(caseDir, `p${permutation}`, 'out'));
      const label = `permutation ${permutation} (${arrangement.description})`;
      expect(rendered.nginxConf, `${label}: nginx.conf`).toBe(baseline.nginxConf);
      expect(rendered.keyFiles, `${label}: key files`).toEqual(baseline.keyFiles);
      expect(rendered.diagnostics, `${label}: diagnostics`).toEqual(baseline.diagnostics);
      expect(rendered.status, `${label}: status`).toBe(baseline.status);
      expect(rendered.exitCode, `${label}: exit code`).toBe(baseline.exitCode);
    }
    // The permutations are only as strong as their variety: every file layout must have been tried.
    // (A case with few documents cannot make multi-document files often; two layouts suffice there.)
    expect(formatsSeen.size, `formats used: ${[...formatsSeen].join(', ')}`).toBeGreaterThanOrEqual(documents.length > 3 ? 3 : 2);
  });
});

describe('the determinism harness itself', () => {
  it('mulberry32 is reproducible and seed-dependent', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const c = mulberry32(43);
    const first = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(first);
    expect(Array.from({ length: 5 }, c)).not.toEqual(first);
    for (const value of first) expect(value >= 0 && value < 1).toBe(true);
  });

  it('reorders keys at every depth without changing values', () => {
    const value = { a: 1, b: { c: [{ d: 'x', e: 'y' }], f: null }, g: 'z' };
    const reversed = reorderKeys(value, 'reverse', mulberry32(1)) as Record<string, unknown>;
    expect(reversed).toEqual(value);
    expect(Object.keys(reversed)).toEqual(['g', 'b', 'a']);
    expect(Object.keys((reversed.b as Record<string, unknown>) ?? {})).toEqual(['f', 'c']);
    const inner = ((reversed.b as { c: Record<string, unknown>[] }).c[0] ?? {}) as Record<string, unknown>;
    expect(Object.keys(inner)).toEqual(['e', 'd']);
  });
});
