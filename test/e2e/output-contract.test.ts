import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../support/cli.js';
import { testNowText } from '../support/options.js';

/**
 * One output contract for every command: `--format json|sarif|markdown` puts one document on stdout
 * and nothing else there; people's text (diagnostics, progress) goes to stderr; the same four formats
 * everywhere; `--quiet` leaves only errors on stderr; `--version`; input without any resource
 * ingress2nginx reads is a usage error that writes nothing.
 */

const input = 'fixtures/hostile/input';
const common = ['--now', testNowText, '--run-dir', '/tmp/ingress2nginx-golden'];

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ingress2nginx-contract-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

let serial = 0;
/** Every command that reports, each in a fresh place for what it writes. */
async function commands(): Promise<Record<string, string[]>> {
  const dir = join(work, `run-${++serial}`);
  await mkdir(dir);
  const rendered = join(dir, 'rendered');
  await runCli(['render', '-f', input, '-o', rendered, ...common]);
  return {
    render: ['render', '-f', input, '-o', join(dir, 'out'), ...common],
    validate: ['validate', '-f', input, ...common],
    routes: ['routes', '-f', input, ...common],
    'diff --base-manifests': ['diff', '-f', input, '--base-manifests', 'fixtures/termination/input', ...common],
    'diff --against': ['diff', '-f', input, '--against', join(dir, 'out-not-there'), ...common],
    review: ['review', '-f', input, '-o', join(dir, 'review.html'), ...common],
    audit: ['audit', '-f', input, ...common],
  };
}

/** What a program reading stdout gets: exactly one document of the format. */
function expectOneDocument(format: string, result: CliRun): void {
  expect(result.stderr).not.toContain('internal error');
  if (format === 'json') expect(() => JSON.parse(result.stdout)).not.toThrow();
  if (format === 'sarif') {
    const log = JSON.parse(result.stdout) as { version: string; runs: { results: unknown[] }[] };
    expect(log.version).toBe('2.1.0');
    expect(log.runs[0]!.results.length).toBeGreaterThan(0);
  }
  if (format === 'markdown') expect(result.stdout).toMatch(/^#{1,3} /);
  // Nothing for people leaked into it.
  expect(result.stdout).not.toMatch(/^(wrote |nginx -t|new manifests:|\d+ error\(s\))/m);
}

describe('every command takes --format text|json|sarif|markdown', () => {
  for (const format of ['json', 'sarif', 'markdown']) {
    it(`${format}: one document on stdout, nothing else there`, async () => {
      for (const [name, argv] of Object.entries(await commands())) {
        const result = await runCli([...argv, '--format', format]);
        expect([1, 2].includes(result.exitCode) ? 'ran' : result.exitCode, name).toBe('ran');
        expectOneDocument(format, result);
      }
    });
  }

  it('text: validate, render and review print nothing on stdout; diagnostics and progress go to stderr', async () => {
    const all = await commands();
    for (const name of ['validate', 'render', 'review'] as const) {
      const result = await runCli(all[name]!);
      expect(result.stdout, name).toBe('');
      expect(result.stderr, name).toMatch(/^\S+hostile\.yaml:\d+:\d+: error \[/m);
      expect(result.stderr, name).toMatch(/^\d+ error\(s\), \d+ warning\(s\), \d+ info$/m);
    }
    expect((await runCli(all.render!)).stderr).toMatch(/^wrote \S+nginx\.conf: /m);
  });

  it('validate and render --format json carry every diagnostic, and SARIF one result per diagnostic', async () => {
    const all = await commands();
    const json = JSON.parse((await runCli([...all.validate!, '--format', 'json'])).stdout) as { diagnostics: unknown[]; status: unknown };
    const rendered = await runCli([...all.render!, '--format', 'json']);
    expect(rendered.stderr).toMatch(/^wrote /);
    expect((JSON.parse(rendered.stdout) as { diagnostics: unknown[] }).diagnostics).toEqual(json.diagnostics);
    const sarif = JSON.parse((await runCli([...all.validate!, '--format', 'sarif'])).stdout) as { runs: { results: unknown[] }[] };
    expect(sarif.runs[0]!.results).toHaveLength(json.diagnostics.length);
  });

  it('diff --against json carries the drift beside the diagnostics', async () => {
    const result = await runCli([...(await commands())['diff --against']!, '--format', 'json']);
    expect(result.exitCode).toBe(1);
    expect((JSON.parse(result.stdout) as { drift: string }).drift).toMatch(/^--- .*nginx\.conf$/m);
  });
});

describe('--quiet', () => {
  it('leaves only the errors on stderr: no warnings, infos, totals or progress; stdout is complete', async () => {
    const all = await commands();
    const loud = await runCli([...all.render!, '--format', 'json']);
    const quiet = await runCli([...all.render!, '--format', 'json', '--quiet']);
    expect(quiet.stdout).toBe(loud.stdout);
    expect(quiet.stderr).toBe('');
    const text = await runCli([...all.validate!, '-q']);
    const lines = text.stderr.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/: error \[/);
    expect(text.exitCode).toBe(1);
  });
});

describe('--version', () => {
  it('prints the version of package.json on stdout and exits 0', async () => {
    const manifest = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await runCli([flag]);
      expect(result).toEqual({ exitCode: 0, stdout: `${manifest.version}\n`, stderr: '' });
    }
  });
});

describe('input with no resource ingress2nginx reads', () => {
  async function renderedBefore(name: string): Promise<{ out: string; before: Record<string, string> }> {
    const out = join(work, name, 'out');
    expect((await runCli(['render', '-f', 'fixtures/termination/input', '-o', out, ...common])).exitCode).toBe(0);
    return { out, before: await snapshotOf(out) };
  }

  async function snapshotOf(dir: string): Promise<Record<string, string>> {
    const files: Record<string, string> = {};
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) files[join(entry.parentPath, entry.name)] = await readFile(join(entry.parentPath, entry.name), 'utf8');
    }
    return files;
  }

  it('render: exit 2 naming the paths; the previous config stays byte for byte', async () => {
    const { out, before } = await renderedBefore('empty-render');
    const empty = join(work, 'empty-render', 'emptydir');
    await mkdir(empty);
    const others = join(work, 'empty-render', 'deployment.yaml');
    await writeFile(others, 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec: {}\n');
    for (const [argv, stdin, found] of [
      [['-f', empty], undefined, 'no .yaml, .yml or .json file'],
      [['-f', '-'], '', 'no Kubernetes object'],
      [['-f', others], undefined, 'only Deployment'],
      [['-f', empty, '-f', others], undefined, 'only Deployment'],
    ] as const) {
      const result = await runCli(['render', ...argv, '-o', out, ...common], stdin === undefined ? {} : { stdin });
      expect(result.exitCode).toBe(2);
      expect(result.stdout).toBe('');
      const paths = argv.filter((a) => a !== '-f').map((a) => (a === '-' ? 'stdin' : a)).join(', ');
      expect(result.stderr).toBe(
        `ingress2nginx: ${paths}: ${found}; none of the kinds ingress2nginx reads (Ingress, IngressClass, Service, Secret, ConfigMap, Namespace, EndpointSlice, GatewayClass, Gateway, TLSRoute, HTTPRoute, GRPCRoute, BackendTLSPolicy, ReferenceGrant). Nothing was written; give --allow-empty if an input without them is meant\n`,
      );
      expect(await snapshotOf(out)).toEqual(before);
    }
  });

  it('a file of broken documents: their diagnostics, then the usage error; nothing written', async () => {
    const { out, before } = await renderedBefore('empty-broken');
    const broken = join(work, 'empty-broken', 'broken.yaml');
    await writeFile(broken, 'kind: [\n');
    const result = await runCli(['render', '-f', broken, '-o', out, ...common]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/broken\.yaml:\d+:\d+: error \[yaml-syntax\][^\n]*\n1 error\(s\), 0 warning\(s\), 0 info\ningress2nginx: \S+broken\.yaml: no Kubernetes object; /);
    expect(await snapshotOf(out)).toEqual(before);
  });

  it('validate, diff, audit, routes and review say the same (exit 2)', async () => {
    const empty = join(work, 'empty-others');
    await mkdir(empty);
    for (const argv of [
      ['validate', '-f', empty],
      ['diff', '-f', empty, '--base-manifests', 'fixtures/termination/input'],
      ['diff', '-f', empty, '--against', join(work, 'nowhere')],
      ['audit', '-f', empty],
      ['routes', '-f', empty],
      ['review', '-f', empty, '-o', join(empty, 'review.html')],
    ]) {
      const result = await runCli([...argv, ...common]);
      expect(result.exitCode, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toMatch(/^ingress2nginx: \S+empty-others: no \.yaml, \.yml or \.json file; /);
    }
    expect(await readdir(empty)).toEqual([]);
  });

  it('--allow-empty renders a config without routes (exit 0), and an empty base of a diff needs no flag', async () => {
    const empty = join(work, 'allow-empty');
    await mkdir(empty);
    const out = join(empty, 'out');
    const result = await runCli(['render', '-f', empty, '-o', out, '--allow-empty', ...common]);
    expect(result.exitCode).toBe(0);
    expect(await readFile(join(out, 'nginx.conf'), 'utf8')).toContain('server_name _;');
    const diff = await runCli(['diff', '-f', 'fixtures/termination/input', '--base-manifests', empty, ...common]);
    expect(diff.exitCode).toBe(1);
  });
});
