import { managedFolders } from '../../src/apply/write.js';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturesRoot, goldenArgs } from '../support/golden.js';
import { requireNginx } from '../support/nginx.js';
import { testNowText } from '../support/options.js';

/**
 * End-to-end: spawns the built binary `bin/ingress2nginx` (which imports dist/) as a user or CI job
 * would, and checks exit codes, stdout, stderr and the files it writes. `npm test` builds first
 * (pretest); this file never builds.
 */

const repoRoot = join(import.meta.dirname, '..', '..');
const binary = join(repoRoot, 'bin', 'ingress2nginx');
const builtMain = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
const now = testNowText;

const termination = join(fixturesRoot, 'termination', 'input');
const hostile = join(fixturesRoot, 'hostile', 'input');
const merging = join(fixturesRoot, 'merging', 'input');

let scratch: string;
/** Short and absolute, as --run-dir requires (unix socket paths live under it). */
let runDir: string;
let streamModule: string;
let nginxBin: string;

beforeAll(async () => {
  if (!existsSync(builtMain)) {
    throw new Error(`${builtMain} is missing: run npm run build first (npm test does it in pretest)`);
  }
  const nginx = requireNginx();
  nginxBin = nginx.binary;
  streamModule = nginx.streamModuleFile ?? 'none';
  scratch = await mkdtemp(join(tmpdir(), 'ingress2nginx-e2e-'));
  runDir = join(await mkdtemp('/tmp/i2n-e2e-'), 'run');
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
  await rm(join(runDir, '..'), { recursive: true, force: true });
});

let dirs = 0;
/** A new empty directory under the scratch dir. */
async function freshDir(label: string): Promise<string> {
  const dir = join(scratch, `${++dirs}-${label}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

interface Run {
  readonly exitCode: number | undefined;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the binary in `cwd` (default: a fresh empty dir) with `input` on stdin, never throwing. */
async function cli(args: readonly string[], options: { cwd?: string; input?: string } = {}): Promise<Run> {
  const result = await execa(binary, args, {
    cwd: options.cwd ?? (await freshDir('cwd')),
    reject: false,
    stripFinalNewline: false,
    ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' as const }),
  });
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** Flags every render/validate/diff here shares, so that diff compares like with like. */
function common(): string[] {
  return ['--run-dir', runDir, '--now', now, '--stream-module', streamModule];
}

/** nginx.conf plus every key file (relative name → contents). */
async function outputFiles(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = { 'nginx.conf': await readFile(join(dir, 'nginx.conf'), 'utf8') };
  for (const folder of managedFolders) {
    if (!existsSync(join(dir, folder))) continue;
    for (const name of (await readdir(join(dir, folder))).sort()) {
      files[`${folder}/${name}`] = await readFile(join(dir, folder, name), 'utf8');
    }
  }
  return files;
}

/** The 1-based line and column where `text` starts in `file`. */
async function positionOf(file: string, text: string): Promise<{ line: number; column: number }> {
  const lines = (await readFile(file, 'utf8')).split('\n');
  const index = lines.findIndex((l) => l.includes(text));
  if (index === -1) throw new Error(`${text} not in ${file}`);
  return { line: index + 1, column: (lines[index] as string).indexOf(text) + 1 };
}

describe('render', () => {
  it('writes the golden nginx.conf and 0600 key files, and prints a summary line on stderr', async () => {
    const out = join(await freshDir('render'), 'out');
    const result = await cli(goldenArgs('termination', termination, out));

    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`wrote ${join(out, 'nginx.conf')}: 2 host(s), 0 SNI route(s), 2 key file(s)\n`);
    expect(result.exitCode).toBe(0);
    const expected = await readFile(join(fixturesRoot, 'termination', 'expected', 'nginx.conf'), 'utf8');
    expect(await readFile(join(out, 'nginx.conf'), 'utf8')).toBe(expected);

    expect((await readdir(join(out, 'tls'))).sort()).toEqual(['default.pem', 'web_app-tls.pem']);
    for (const name of ['default.pem', 'web_app-tls.pem']) {
      const file = join(out, 'tls', name);
      expect(((await stat(file)).mode & 0o777).toString(8), file).toBe('600');
      expect(await readFile(file, 'utf8')).toMatch(/-----BEGIN CERTIFICATE-----[\s\S]+-----BEGIN PRIVATE KEY-----/);
    }
  });

  it('--check runs the real nginx -t and reports a valid configuration', async () => {
    const out = join(await freshDir('check'), 'out');
    const result = await cli(['render', '-f', termination, '-o', out, ...common(), '--check', '--nginx-bin', nginxBin]);

    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('nginx -t: configuration is valid\n');
    expect(result.exitCode).toBe(0);
  });

  it('--check exits 2 with nginx\'s own message when nginx -t rejects the config', async () => {
    const out = join(await freshDir('check-fails'), 'out');
    const missingModule = '/nonexistent/ngx_stream_module.so';
    const result = await cli([
      'render',
      ...['-f', termination, '-o', out, ...common()],
      ...['--stream-module', missingModule, '--check', '--nginx-bin', nginxBin],
    ]);

    expect(result.stderr).not.toContain('configuration is valid');
    expect(result.stderr).toContain('nginx -t failed');
    // nginx's words, with the file and line it choked on.
    expect(result.stderr).toContain(`[emerg]`);
    expect(result.stderr).toContain(`dlopen() "${missingModule}" failed`);
    expect(result.stderr).toContain(`${join(out, '.i2n-rejected', 'nginx.conf')}:`);
    expect(result.exitCode).toBe(2);
  });

  it('--check with a missing nginx binary exits 2 and says so', async () => {
    const out = join(await freshDir('no-nginx'), 'out');
    const result = await cli(['render', '-f', termination, '-o', out, ...common(), '--check', '--nginx-bin', '/no/such/nginx']);

    expect(result.stderr).toContain('nginx binary "/no/such/nginx" not found');
    expect(result.stderr).not.toContain('internal error');
    expect(result.stderr).not.toContain('configuration is valid');
    expect(result.exitCode).toBe(2);
  });

  it('-f - reads stdin and renders the same bytes as the file', async () => {
    const dir = await freshDir('stdin');
    const text = [
      await readFile(join(termination, 'app.yaml'), 'utf8'),
      await readFile(join(termination, 'ingress-class.yaml'), 'utf8'),
    ].join('---\n');
    const file = join(dir, 'all.yaml');
    await writeFile(file, text);

    const fromFile = await cli(['render', '-f', file, '-o', join(dir, 'from-file'), ...common()]);
    const fromStdin = await cli(['render', '-f', '-', '-o', join(dir, 'from-stdin'), ...common()], { input: text });

    expect(fromFile.exitCode).toBe(0);
    expect(fromStdin.stdout).toBe('');
    expect(fromStdin.exitCode).toBe(0);
    const rendered = await outputFiles(join(dir, 'from-stdin'));
    expect(Object.keys(rendered)).toEqual(['nginx.conf', 'tls/default.pem', 'tls/web_app-tls.pem']);
    expect(rendered).toEqual(await outputFiles(join(dir, 'from-file')));
  });

  it('takes several -f (a file and a directory) together', async () => {
    const dir = await freshDir('multi');
    // The IngressClass that makes the Ingress ours lives in a separate directory.
    await mkdir(join(dir, 'classes'));
    await copyFile(join(termination, 'ingress-class.yaml'), join(dir, 'classes', 'ingress-class.yaml'));
    const app = join(termination, 'app.yaml');

    const both = await cli(['render', '-f', app, '-f', join(dir, 'classes'), '-o', join(dir, 'both'), ...common()]);
    const whole = await cli(['render', '-f', termination, '-o', join(dir, 'whole'), ...common()]);
    const appOnly = await cli(['render', '-f', app, '-o', join(dir, 'app-only'), ...common()]);

    expect(both.exitCode).toBe(0);
    expect(whole.exitCode).toBe(0);
    expect(await outputFiles(join(dir, 'both'))).toEqual(await outputFiles(join(dir, 'whole')));
    // Without the directory the Ingress is not ours: proof that both inputs were read.
    expect(appOnly.stderr).toContain('ingress-class-skipped');
    expect(await readFile(join(dir, 'app-only', 'nginx.conf'), 'utf8')).not.toContain('app.example.test');
    expect(await readFile(join(dir, 'both', 'nginx.conf'), 'utf8')).toContain('server_name app.example.test;');
  });
});

interface JsonDiagnostic {
  severity: 'error' | 'warning' | 'info';
  code: string;
  resource: { kind: string; namespace?: string; name: string } | null;
  file: string | null;
  line: number | null;
  column: number | null;
  field: string | null;
  message: string;
}

interface JsonReport {
  diagnostics: JsonDiagnostic[];
  status: Record<string, unknown>;
}

const snippetKey = 'nginx.ingress.kubernetes.io/configuration-snippet';

describe('start-up', () => {
  /**
   * Runs the binary with a resolve hook that refuses the cluster client and the metrics library: loading
   * them took 0.3 s and 70 MB of every command, and only `run` and `audit --cluster` use them.
   */
  async function withoutClusterLibraries(args: readonly string[]): Promise<Run> {
    const dir = await freshDir('hooks');
    await writeFile(
      join(dir, 'hooks.mjs'),
      `export async function resolve(specifier, context, next) {
        if (specifier === '@kubernetes/client-node' || specifier === 'prom-client') throw new Error('refused to load ' + specifier);
        return next(specifier, context);
      }\n`,
    );
    await writeFile(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
    const result = await execa(process.execPath, ['--import', join(dir, 'register.mjs'), binary, ...args], {
      cwd: dir,
      reject: false,
      stdin: 'ignore',
    });
    return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
  }

  it('render, validate and audit from files load no cluster client', async () => {
    const out = join(await freshDir('start-up'), 'out');
    const render = await withoutClusterLibraries(goldenArgs('termination', termination, out));
    expect(render.stderr).toMatch(/^wrote /);
    expect(render.exitCode).toBe(0);
    const validate = await withoutClusterLibraries(['validate', '-f', termination, ...common()]);
    expect(validate.exitCode).toBe(0);
    const audit = await withoutClusterLibraries(['audit', '-f', termination]);
    expect(audit.stderr).not.toContain('refused to load');
    expect(audit.exitCode).toBe(0);
  });

  it('run loads it, so the hook would see a command that does', async () => {
    const run = await withoutClusterLibraries(['run', '-o', await freshDir('run-output')]);
    // Whichever of the two the module graph reaches first: the order follows the imports, not the intent.
    expect(run.stderr).toMatch(/refused to load (@kubernetes\/client-node|prom-client)/);
    expect(run.exitCode).toBe(2);
  });
});

describe('validate', () => {
  it('--format json prints diagnostics as JSON with a fixed set of keys, and exits 1 on errors', async () => {
    const cwd = await freshDir('validate-json');
    const result = await cli(['validate', '-f', hostile, '--format', 'json', ...common()], { cwd });

    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout) as JsonReport;
    expect(Object.keys(report)).toEqual(['diagnostics', 'status']);
    expect(report.status).toEqual({});
    const diagnostics = report.diagnostics;
    expect(Array.isArray(diagnostics)).toBe(true);
    expect(diagnostics.length).toBeGreaterThan(1);
    for (const d of diagnostics) {
      expect(Object.keys(d)).toEqual(['severity', 'code', 'resource', 'file', 'line', 'column', 'field', 'message']);
    }

    const file = join(hostile, 'hostile.yaml');
    const position = await positionOf(file, `${snippetKey}:`);
    expect(diagnostics).toContainEqual({
      severity: 'error',
      code: 'snippet-refused',
      resource: { kind: 'Ingress', namespace: 'web', name: 'snippet' },
      file,
      line: position.line,
      column: position.column,
      field: `metadata.annotations[${JSON.stringify(snippetKey)}]`,
      message: expect.stringContaining('is refused'),
    });
    // validate writes nothing.
    expect(await readdir(cwd)).toEqual([]);
  });

  it('reports stdin input as <stdin> with the same lines as the file', async () => {
    const file = join(hostile, 'hostile.yaml');
    const fromFile = await cli(['validate', '-f', file, '--format', 'json', ...common()]);
    const fromStdin = await cli(['validate', '-f', '-', '--format', 'json', ...common()], { input: await readFile(file, 'utf8') });

    expect(fromStdin.exitCode).toBe(1);
    const expected = (JSON.parse(fromFile.stdout) as JsonReport).diagnostics.map((d) => ({ ...d, file: '<stdin>' }));
    expect((JSON.parse(fromStdin.stdout) as JsonReport).diagnostics).toEqual(expected);
  });

  it('text format: one `file:line:col: severity [code] Kind ns/name field: message` line each, then a summary', async () => {
    const cwd = await freshDir('validate-text');
    await mkdir(join(cwd, 'manifests'));
    await copyFile(join(hostile, 'hostile.yaml'), join(cwd, 'manifests', 'hostile.yaml'));

    const text = await cli(['validate', '-f', 'manifests', ...common()], { cwd });
    const json = await cli(['validate', '-f', 'manifests', '--format', 'json', ...common()], { cwd });

    expect(text.exitCode).toBe(1);
    expect(text.stdout).toBe('');
    const diagnostics = (JSON.parse(json.stdout) as JsonReport).diagnostics;
    const lines = text.stderr.split('\n');
    expect(lines.pop()).toBe(''); // ends with a newline
    const summary = lines.pop();
    const count = (severity: string) => diagnostics.filter((d) => d.severity === severity).length;
    expect(summary).toBe(`${count('error')} error(s), ${count('warning')} warning(s), ${count('info')} info`);
    expect(count('error')).toBeGreaterThan(0);

    // Rebuilt from the JSON report field by field: the text format is the documented contract.
    const expected = diagnostics.map((d) => {
      const where = `${d.file}:${d.line}${d.column === null ? '' : `:${d.column}`}`;
      const resource = d.resource ? ` ${d.resource.kind} ${d.resource.namespace ? `${d.resource.namespace}/` : ''}${d.resource.name}` : '';
      return `${where}: ${d.severity} [${d.code}]${resource}${d.field === null ? '' : ` ${d.field}`}: ${d.message}`;
    });
    expect(lines).toEqual(expected);

    const position = await positionOf(join(cwd, 'manifests', 'hostile.yaml'), `${snippetKey}:`);
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^manifests/hostile\\.yaml:${position.line}:${position.column}: error \\[snippet-refused\\] Ingress web/snippet ` +
            `metadata\\.annotations\\["nginx\\.ingress\\.kubernetes\\.io/configuration-snippet"\\]: .+`,
        ),
      ),
    );
    for (const line of lines) {
      expect(line).toMatch(/^manifests\/hostile\.yaml:\d+(:\d+)?: (error|warning|info) \[[a-z0-9-]+\]( [A-Za-z]+ [a-z0-9-]+\/[a-z0-9-]+)?( \S+)?: \S/);
    }
  });

  it('--strict turns warnings into exit 1', async () => {
    const lenient = await cli(['validate', '-f', merging, '--format', 'json', ...common()]);
    const strict = await cli(['validate', '-f', merging, '--format', 'json', '--strict', ...common()]);

    const diagnostics = (JSON.parse(lenient.stdout) as JsonReport).diagnostics;
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(diagnostics.filter((d) => d.severity === 'warning').length).toBeGreaterThan(0);
    expect(lenient.exitCode).toBe(0);
    expect(strict.exitCode).toBe(1);
    expect((JSON.parse(strict.stdout) as JsonReport).diagnostics).toEqual(diagnostics);
  });
});

describe('diff', () => {
  /** A fresh render of the termination fixture, and the diff command that compares against it. */
  async function rendered(label: string): Promise<{ out: string; diff: () => Promise<Run> }> {
    const out = join(await freshDir(label), 'out');
    const render = await cli(['render', '-f', termination, '-o', out, ...common()]);
    expect(render.exitCode).toBe(0);
    return { out, diff: () => cli(['diff', '-f', termination, '--against', out, ...common()]) };
  }

  it('exits 0 and prints nothing right after render', async () => {
    const { diff } = await rendered('diff-clean');
    const result = await diff();

    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });

  it('exits 1 with a unified diff when nginx.conf was edited', async () => {
    const { out, diff } = await rendered('diff-edited');
    const conf = join(out, 'nginx.conf');
    const original = await readFile(conf, 'utf8');
    expect(original).toContain('server_name www.app.example.test;');
    await writeFile(conf, original.replace('server_name www.app.example.test;', 'server_name edited.example.test;'));

    const result = await diff();
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`^--- ${conf.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'm'));
    expect(result.stdout).toMatch(/^\+\+\+ \S*nginx\.conf\b/m);
    expect(result.stdout).toMatch(/^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m);
    expect(result.stdout).toMatch(/^-\s+server_name edited\.example\.test;$/m);
    expect(result.stdout).toMatch(/^\+\s+server_name www\.app\.example\.test;$/m);
  });

  it('names a deleted key file as missing and never prints key material', async () => {
    const { out, diff } = await rendered('diff-missing');
    const keyFile = join(out, 'tls', 'web_app-tls.pem');
    await unlink(keyFile);

    const result = await diff();
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain(`missing: ${keyFile}\n`);
    expect(result.stdout + result.stderr).not.toContain('PRIVATE KEY');
    expect(result.stdout + result.stderr).not.toContain('BEGIN');
  });

  it('names a changed key file without showing either version', async () => {
    const { out, diff } = await rendered('diff-differs');
    const keyFile = join(out, 'tls', 'web_app-tls.pem');
    await writeFile(keyFile, '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n');

    const result = await diff();
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain(`differs: ${keyFile}`);
    expect(result.stdout + result.stderr).not.toContain('PRIVATE KEY');
    expect(result.stdout + result.stderr).not.toContain('bm90IGEga2V5');
  });

  it('names a stray file in tls/ as stale', async () => {
    const { out, diff } = await rendered('diff-stale');
    const stray = join(out, 'tls', 'stray.pem');
    await writeFile(stray, '-----BEGIN PRIVATE KEY-----\nc3RyYXk=\n-----END PRIVATE KEY-----\n', { mode: 0o600 });

    const result = await diff();
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain(`stale: ${stray}\n`);
    expect(result.stdout + result.stderr).not.toContain('PRIVATE KEY');
  });
});

describe('usage errors exit 2 and write nothing', () => {
  const cases: readonly (readonly [name: string, args: (out: string) => string[], message: string | RegExp])[] = [
    ['an unknown flag', (out) => ['render', '-f', termination, '-o', out, '--bogus'], "unknown option '--bogus'"],
    ['no -f', (out) => ['render', '-o', out], "required option '-f, --filename <path>' not specified"],
    ['--https-port 0', (out) => ['render', '-f', termination, '-o', out, '--https-port', '0'], /--https-port.*'0' is invalid/],
    [
      'a relative --run-dir',
      (out) => ['render', '-f', termination, '-o', out, '--run-dir', 'relative/path'],
      /--run-dir.*'relative\/path' is invalid.*absolute/,
    ],
    [
      'a -f path that does not exist',
      (out) => ['render', '-f', '/nonexistent/ingress2nginx/missing.yaml', '-o', out],
      '/nonexistent/ingress2nginx/missing.yaml: no such file or directory',
    ],
    [
      '--configmap without a namespace',
      (out) => ['render', '-f', termination, '-o', out, '--configmap', 'not-namespaced'],
      /--configmap.*'not-namespaced' is invalid.*namespace\/name/,
    ],
    ['validate with no -f', () => ['validate'], "required option '-f, --filename <path>' not specified"],
  ];

  it.each(cases)('%s', async (_name, args, message) => {
    const out = join(await freshDir('usage'), 'out');
    const result = await cli(args(out));

    expect(result.stderr).toMatch(typeof message === 'string' ? new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : message);
    expect(result.stderr).not.toContain('internal error');
    expect(result.stdout).toBe('');
    expect(result.exitCode).toBe(2);
    expect(existsSync(out)).toBe(false);
  });
});

describe('help', () => {
  it('--help exits 0 and lists the three commands', async () => {
    const result = await cli(['--help']);

    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    for (const command of ['render', 'validate', 'diff']) expect(result.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
  });

  it('render --help lists its flags', async () => {
    const result = await cli(['render', '--help']);

    expect(result.exitCode).toBe(0);
    for (const flag of ['--filename', '--output', '--check', '--nginx-bin', '--run-dir', '--format', '--strict']) {
      expect(result.stdout).toContain(flag);
    }
  });
});
