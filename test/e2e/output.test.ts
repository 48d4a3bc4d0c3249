import { existsSync, watch } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { execa, execaSync } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturesRoot } from '../support/golden.js';
import { requireNginx } from '../support/nginx.js';
import { createCa, issueCertificate, type CertificateFiles } from '../support/pki.js';
import { manifestsText, numberedSites, tlsSecret, writePoisonNginx, type Site } from '../support/tenants.js';

/**
 * End-to-end tests of the output folder: `render` writes through a staging folder under a lock, keeps
 * the last good config when `--check` fails, leaves out what nginx rejects, rewrites nothing that did
 * not change, cleans up after a killed run, and reports a broken environment in one line. Everything
 * runs the built binary with the real nginx; nothing is mocked.
 */

const repoRoot = join(import.meta.dirname, '..', '..');
const binary = join(repoRoot, 'bin', 'ingress2nginx');
const builtMain = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
const termination = join(fixturesRoot, 'termination', 'input');
const lockName = '.ingress2nginx.lock';

let scratch: string;
let runDir: string;
let streamModule: string;
let nginxBin: string;
let poison: { binary: string; callLog: string };
let wildcard: CertificateFiles;

beforeAll(async () => {
  if (!existsSync(builtMain)) throw new Error(`${builtMain} is missing: run npm run build first (npm test does it in pretest)`);
  const nginx = requireNginx();
  nginxBin = nginx.binary;
  streamModule = nginx.streamModuleFile ?? 'none';
  scratch = await mkdtemp(join(tmpdir(), 'ingress2nginx-output-'));
  runDir = join(await mkdtemp('/tmp/i2n-out-'), 'run');
  poison = await writePoisonNginx(await mkdtemp(join(scratch, 'poison-')), nginxBin);
  const ca = await createCa(scratch, 'output CA');
  wildcard = await issueCertificate(ca, { commonName: '*.example.com', sans: ['*.example.com'] });
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
  await rm(join(runDir, '..'), { recursive: true, force: true });
});

let dirs = 0;
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

/** Runs the binary, never throwing; a run that hangs is killed after `timeout` ms and shows as exit undefined. */
async function cli(args: readonly string[], options: { timeout?: number } = {}): Promise<Run> {
  const result = await execa(binary, args, {
    cwd: scratch,
    reject: false,
    stdin: 'ignore',
    stripFinalNewline: false,
    timeout: options.timeout ?? 60_000,
  });
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
}

function common(): string[] {
  return ['--run-dir', runDir, '--stream-module', streamModule];
}

/** `render` of `text` (written to a file of its own) into `out`. */
async function render(text: string, out: string, extra: readonly string[] = [], options: { timeout?: number } = {}): Promise<Run> {
  const file = join(await freshDir('input'), 'input.yaml');
  await writeFile(file, text);
  return cli(['render', '-f', file, '-o', out, ...common(), ...extra], options);
}

/** Sites with a TLS Secret each, named after `tag` so that two inputs share no key file. */
function tlsSites(tag: string, count: number): { sites: Site[]; text: string } {
  const sites = numberedSites(count).map((site) => ({ ...site, name: `${tag}-${site.name}`, secret: `tls-${tag}-${site.name}` }));
  return { sites, text: manifestsText(sites, sites.map((site) => tlsSecret(site.secret, wildcard))) };
}

interface FileState {
  readonly contents: string;
  readonly ino: number;
  readonly mtimeMs: number;
  readonly mode: number;
}

/** Every file under `dir`, recursively, by relative path. */
async function snapshotFolder(dir: string): Promise<Record<string, FileState>> {
  const files: Record<string, FileState> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const info = await stat(path);
    files[path.slice(dir.length + 1)] = {
      contents: await readFile(path, 'utf8'),
      ino: info.ino,
      mtimeMs: info.mtimeMs,
      mode: info.mode & 0o7777,
    };
  }
  return files;
}

/** The files a config names: ssl_certificate, ssl_certificate_key, *_trusted_certificate and friends. */
function namedKeyFiles(conf: string): string[] {
  const names = [...conf.matchAll(/^\s*\w*(?:certificate|certificate_key)\s+(\S+);/gm)].map((m) => m[1] as string);
  return [...new Set(names)].sort();
}

/** The real `nginx -t` on a rendered folder, with a throw-away prefix. */
async function nginxAccepts(dir: string): Promise<{ ok: boolean; output: string }> {
  const prefix = await mkdtemp(join(scratch, 'prefix-'));
  await mkdir(runDir, { recursive: true });
  const result = await execa(nginxBin, ['-t', '-q', '-p', `${prefix}/`, '-c', join(dir, 'nginx.conf')], { reject: false, stdin: 'ignore' });
  return { ok: result.exitCode === 0, output: result.stderr };
}

/** How many times the poison stand-in has run `nginx -t` so far. */
async function nginxRuns(): Promise<number> {
  const log = await readFile(poison.callLog, 'utf8').catch(() => '');
  return log.split('\n').filter(Boolean).length;
}

/** A pid that no process has now: one of a process that has just ended. */
async function deadPid(): Promise<number> {
  const child = execa('true');
  const pid = child.pid as number;
  await child;
  return pid;
}

/** The one-line report of an environment problem: exit 2, nothing on stdout, no stack trace. */
function expectEnvironmentError(result: Run, message: string | RegExp): void {
  expect(result.stdout).toBe('');
  expect(result.stderr).not.toContain('internal error');
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr.split('\n')).toEqual([expect.stringMatching(/^ingress2nginx: /), '']);
  expect(result.stderr).toMatch(message);
  expect(result.exitCode).toBe(2);
}

describe('render --check when nginx rejects the config', () => {
  it('exits 2 with nginx\'s message and leaves the previous config and key files as they were', async () => {
    const out = join(await freshDir('check-fails'), 'out');
    const before = tlsSites('old', 3);
    expect((await render(before.text, out, ['--check', '--nginx-bin', nginxBin])).exitCode).toBe(0);
    const previous = await snapshotFolder(out);
    expect(Object.keys(previous).filter((p) => p.startsWith('tls/'))).toHaveLength(4);

    const after = tlsSites('new', 5);
    const missingModule = '/nonexistent/ngx_stream_module.so';
    const result = await render(after.text, out, ['--check', '--nginx-bin', nginxBin, '--stream-module', missingModule]);

    expect(result.stderr).toContain('nginx -t failed:');
    expect(result.stderr).toContain(`dlopen() "${missingModule}" failed`);
    expect(result.stderr).toContain(`${join(out, '.i2n-rejected', 'nginx.conf')}:`);
    expect(result.stdout).toBe('');
    expect(result.exitCode).toBe(2);
    // Byte for byte, same inodes, no new key file, nothing staged left behind.
    const { ['.i2n-rejected/nginx.conf']: rejected, ...rest } = await snapshotFolder(out);
    expect(Object.fromEntries(Object.entries(rest).filter(([path]) => !path.startsWith('.i2n-rejected/')))).toEqual(previous);
    expect(rejected?.contents).toContain(`load_module ${missingModule};`);
    expect(rejected?.contents).toContain('ssl_certificate tls/web_tls-new-site-4.pem;');
    expect((await readdir(out)).sort()).toEqual(['.i2n-rejected', 'auth', 'ca', 'client', 'nginx.conf', 'tls']);
  });

  it('--format json: nginx\'s message is in the one JSON document on stdout', async () => {
    const out = join(await freshDir('check-json'), 'out');
    const missingModule = '/nonexistent/ngx_stream_module.so';
    const result = await render(tlsSites('json', 2).text, out, [
      ...['--check', '--nginx-bin', nginxBin, '--stream-module', missingModule, '--format', 'json'],
    ]);

    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout) as { diagnostics: unknown[]; nginx: { ok: boolean; output: string } };
    expect(report.nginx.ok).toBe(false);
    expect(report.nginx.output).toContain(`dlopen() "${missingModule}" failed`);
    expect(report.nginx.output).toContain(join(out, '.i2n-rejected', 'nginx.conf'));
    expect(existsSync(join(out, 'nginx.conf'))).toBe(false);
  });

  it('a later good render removes the kept rejected config and its key material', async () => {
    const out = join(await freshDir('rejected-cleared'), 'out');
    const input = tlsSites('clear', 2).text;
    expect((await render(input, out, ['--check', '--nginx-bin', nginxBin, '--stream-module', '/nonexistent/x.so'])).exitCode).toBe(2);
    expect(existsSync(join(out, '.i2n-rejected', 'tls', 'web_tls-clear-site-0.pem'))).toBe(true);

    expect((await render(input, out, ['--check', '--nginx-bin', nginxBin])).exitCode).toBe(0);
    expect(existsSync(join(out, '.i2n-rejected'))).toBe(false);
  });
});

describe('render --check leaves out what nginx rejects', () => {
  it('one bad Ingress among many: the others are served, the bad one gets nginx-rejected with nginx\'s words, exit 1', async () => {
    const out = join(await freshDir('quarantine'), 'out');
    const sites = numberedSites(60, [41]);
    const result = await render(manifestsText(sites), out, ['--check', '--nginx-bin', poison.binary]);

    expect(result.stderr).toMatch(/^\S+input\.yaml:\d+: error \[nginx-rejected\] Ingress web\/ing-site-41: .*\[emerg\] unknown directive "poison-41\.example\.com"/m);
    expect(result.stderr).toContain(
      `1 error(s), 0 warning(s), 0 info\nwrote ${join(out, 'nginx.conf')}: 59 host(s), 0 SNI route(s), 1 key file(s)\nnginx -t: configuration is valid\n`,
    );
    expect(result.stdout).toBe('');
    expect(result.exitCode).toBe(1);
    const conf = await readFile(join(out, 'nginx.conf'), 'utf8');
    expect(conf).not.toContain('poison');
    for (const site of sites.filter((s) => s.name !== 'site-41')) expect(conf).toContain(`server_name ${site.host};`);
    expect(await nginxAccepts(out)).toEqual({ ok: true, output: '' });
    // The config nginx rejected is kept for reading.
    expect(await readFile(join(out, '.i2n-rejected', 'nginx.conf'), 'utf8')).toContain('server_name poison-41.example.com;');
  });

  it('--format json: the nginx-rejected diagnostic and nginx: {ok: true} in one JSON document', async () => {
    const out = join(await freshDir('quarantine-json'), 'out');
    const result = await render(manifestsText(numberedSites(8, [2, 5])), out, ['--check', '--nginx-bin', poison.binary, '--format', 'json']);

    expect(result.exitCode).toBe(1);
    const report = JSON.parse(result.stdout) as {
      diagnostics: { code: string; resource: { name: string }; message: string }[];
      nginx: { ok: boolean; output: string };
    };
    expect(report.nginx).toEqual({ ok: true, output: '' });
    const rejected = report.diagnostics.filter((d) => d.code === 'nginx-rejected');
    expect(rejected.map((d) => d.resource.name)).toEqual(['ing-site-2', 'ing-site-5']);
    expect(rejected[0]?.message).toContain('(nginx: [emerg] unknown directive "poison-2.example.com")');
    expect(rejected[1]?.message).toContain('(nginx: [emerg] unknown directive "poison-5.example.com")');
  });

  it('a bad Secret is left out as the Secret; its host is still served', async () => {
    const out = join(await freshDir('quarantine-secret'), 'out');
    const sites: Site[] = [...tlsSites('ok', 3).sites, { name: 'shop', host: 'shop.example.com', secret: 'poison-shop' }];
    const text = manifestsText(sites, sites.map((site) => tlsSecret(site.secret as string, wildcard)));
    const result = await render(text, out, ['--check', '--nginx-bin', poison.binary, '--format', 'json']);

    expect(result.exitCode).toBe(1);
    const report = JSON.parse(result.stdout) as { diagnostics: { code: string; resource: { kind: string; name: string } }[] };
    expect(report.diagnostics.filter((d) => d.code === 'nginx-rejected').map((d) => d.resource)).toEqual([
      expect.objectContaining({ kind: 'Secret', name: 'poison-shop' }),
    ]);
    expect(await readFile(join(out, 'nginx.conf'), 'utf8')).toContain('server_name shop.example.com;');
    expect(existsSync(join(out, 'tls', 'web_poison-shop.pem'))).toBe(false);
  });

  it('gives the same output and the same diagnostics for the same resources in another order', async () => {
    const dir = await freshDir('quarantine-order');
    const sites: Site[] = [
      ...numberedSites(20, [4, 13]),
      { name: 'pair-a', host: 'pair-a.example.com' },
      { name: 'pair-b', host: 'pair-b.example.com' },
    ];
    const documents = manifestsText(sites).split('---\n');
    const runs = [];
    for (const [label, order] of [
      ['forward', documents],
      ['reversed', [...documents].reverse()],
    ] as const) {
      const out = join(dir, label);
      const result = await render(order.join('---\n'), out, ['--check', '--nginx-bin', poison.binary, '--format', 'json']);
      expect(result.exitCode).toBe(1);
      const report = JSON.parse(result.stdout) as { diagnostics: { code: string; resource: unknown; message: string }[] };
      runs.push({
        files: await snapshotFolder(out).then((files) => Object.fromEntries(Object.entries(files).map(([p, f]) => [p, f.contents]))),
        // Diagnostics are ordered by file and line, which the order changes; their contents must not change.
        rejected: report.diagnostics
          .filter((d) => d.code === 'nginx-rejected')
          .map((d) => JSON.stringify([d.resource, d.message]))
          .sort(),
      });
    }
    expect(runs[0]?.rejected).toHaveLength(3);
    expect(runs[1]).toEqual(runs[0]);
  });

  it('a failure no resource causes is returned as it is: exit 2, the output folder untouched', async () => {
    const out = join(await freshDir('quarantine-none'), 'out');
    expect((await render(manifestsText(numberedSites(5)), out)).exitCode).toBe(0);
    const previous = await snapshotFolder(out);
    const callsBefore = await nginxRuns();

    const result = await render(manifestsText(numberedSites(30)), out, [
      ...['--check', '--nginx-bin', poison.binary, '--stream-module', '/nonexistent/ngx_stream_module.so'],
    ]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).not.toContain('nginx-rejected');
    expect(result.stderr).toContain('dlopen() "/nonexistent/ngx_stream_module.so" failed');
    const after = Object.entries(await snapshotFolder(out)).filter(([path]) => !path.startsWith('.i2n-rejected/'));
    expect(Object.fromEntries(after)).toEqual(previous);
    // The full build, and the build with no tenant resource in it: nothing else was tried.
    expect((await nginxRuns()) - callsBefore).toBe(2);
  });
});

describe('unchanged files', () => {
  it('an unchanged render (with or without --check) rewrites nothing', async () => {
    const out = join(await freshDir('unchanged'), 'out');
    const { text } = tlsSites('same', 4);
    expect((await render(text, out)).exitCode).toBe(0);
    const first = await snapshotFolder(out);
    expect(Object.keys(first)).toHaveLength(6);

    expect((await render(text, out)).exitCode).toBe(0);
    expect(await snapshotFolder(out)).toEqual(first);
    expect((await render(text, out, ['--check', '--nginx-bin', nginxBin])).exitCode).toBe(0);
    expect(await snapshotFolder(out)).toEqual(first);
  });

  it('replaces only what changed and removes stale key files', async () => {
    const out = join(await freshDir('changed'), 'out');
    const sites = tlsSites('chg', 4).sites;
    const text = (kept: readonly Site[]) => manifestsText(kept, kept.map((s) => tlsSecret(s.secret as string, wildcard)));
    expect((await render(text(sites), out)).exitCode).toBe(0);
    const first = await snapshotFolder(out);

    expect((await render(text(sites.slice(0, 2)), out)).exitCode).toBe(0);
    const second = await snapshotFolder(out);
    expect(Object.keys(second).sort()).toEqual(['nginx.conf', 'tls/default.pem', 'tls/web_tls-chg-site-0.pem', 'tls/web_tls-chg-site-1.pem']);
    expect(second['nginx.conf']?.ino).not.toBe(first['nginx.conf']?.ino);
    for (const path of ['tls/default.pem', 'tls/web_tls-chg-site-0.pem', 'tls/web_tls-chg-site-1.pem']) {
      expect(second[path], path).toEqual(first[path]);
    }
  });

  it('puts back the 0600 mode of a key file someone opened up', async () => {
    const out = join(await freshDir('mode'), 'out');
    const { text } = tlsSites('mode', 1);
    expect((await render(text, out)).exitCode).toBe(0);
    const keyFile = join(out, 'tls', 'web_tls-mode-site-0.pem');
    await chmod(keyFile, 0o644);

    expect((await render(text, out)).exitCode).toBe(0);
    expect(((await stat(keyFile)).mode & 0o777).toString(8)).toBe('600');
  });
});

describe('the output folder lock', () => {
  /** Each of these starts 18 to 24 CLI processes: on a busy 2-core machine, that takes most of a minute. */
  const concurrentRendersTimeout = 180_000;

  /** Every key file the final nginx.conf names exists, and the real nginx accepts the folder. */
  async function expectConsistent(out: string): Promise<void> {
    const conf = await readFile(join(out, 'nginx.conf'), 'utf8');
    const named = namedKeyFiles(conf);
    expect(named.length).toBeGreaterThan(1);
    for (const file of named) expect(existsSync(join(out, file)), `${file} named in nginx.conf`).toBe(true);
    expect(await nginxAccepts(out)).toEqual({ ok: true, output: '' });
  }

  it('concurrent renders of different inputs into one folder never leave nginx.conf naming a missing key file', async () => {
    const out = join(await freshDir('concurrent'), 'out');
    const inputs = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const file = join(await freshDir(`concurrent-${i}`), 'input.yaml');
        await writeFile(file, tlsSites(`c${i}`, 40).text);
        return file;
      }),
    );
    for (let round = 0; round < 4; round++) {
      // Half of them with --check: the lock is held while they stage and check, too.
      const check = ['--check', '--nginx-bin', nginxBin];
      const results = await Promise.all(inputs.map((file, i) => cli(['render', '-f', file, '-o', out, ...common(), ...(i % 2 ? check : [])])));
      for (const result of results) {
        expect(result.stderr).toMatch(/^wrote /);
        expect(result.exitCode).toBe(0);
      }
      await expectConsistent(out);
      expect((await readdir(out)).sort()).toEqual(['auth', 'ca', 'client', 'nginx.conf', 'tls']);
    }
  }, concurrentRendersTimeout);

  it('takes over a lock left by a dead process, also when several renders find it at once', async () => {
    const out = join(await freshDir('stale-lock'), 'out');
    await mkdir(out);
    await writeFile(join(out, lockName), `${await deadPid()}@${hostname()}\n`);

    const result = await render(tlsSites('stale', 2).text, out, [], { timeout: 30_000 });
    expect(result.stderr).toMatch(/^wrote [^\n]+\n$/);
    expect(result.exitCode).toBe(0);
    expect(existsSync(join(out, lockName))).toBe(false);

    for (let round = 0; round < 3; round++) {
      await writeFile(join(out, lockName), `${await deadPid()}@${hostname()}\n`);
      const inputs = Array.from({ length: 6 }, (_, i) => tlsSites(`s${round}${i}`, 20).text);
      const results = await Promise.all(inputs.map((text) => render(text, out, [], { timeout: 30_000 })));
      for (const each of results) expect(each.exitCode).toBe(0);
      await expectConsistent(out);
      expect((await readdir(out)).sort()).toEqual(['auth', 'ca', 'client', 'nginx.conf', 'tls']);
    }
  }, concurrentRendersTimeout);

  it('waits while a live process holds the lock, and renders once it is released', async () => {
    const out = join(await freshDir('live-lock'), 'out');
    await mkdir(out);
    // This test's own process: alive for as long as the render waits.
    await writeFile(join(out, lockName), `${process.pid}@${hostname()}\n`);
    const file = join(await freshDir('live-lock-input'), 'input.yaml');
    await writeFile(file, tlsSites('live', 2).text);
    const child = execa(binary, ['render', '-f', file, '-o', out, ...common()], { reject: false, stdin: 'ignore' });

    const early = await Promise.race([child.then(() => 'exited' as const), delay(2_000).then(() => 'waiting' as const)]);
    expect(early).toBe('waiting');
    // Nothing but the lock and the waiting render's own lock candidate.
    expect((await readdir(out)).filter((name) => !name.startsWith(lockName))).toEqual([]);

    await rm(join(out, lockName));
    const result = await child;
    expect(result.stderr).toMatch(/^wrote [^\n]+$/);
    expect(result.exitCode).toBe(0);
    expect(existsSync(join(out, 'nginx.conf'))).toBe(true);
    expect(existsSync(join(out, lockName))).toBe(false);
  });
});

describe('what a killed run leaves behind', () => {
  it('a run killed while staging leaves a staging folder and a dead lock; the next render removes both', async () => {
    const out = join(await freshDir('killed'), 'out');
    await mkdir(out);
    const file = join(await freshDir('killed-input'), 'input.yaml');
    await writeFile(file, tlsSites('big', 1500).text);
    const child = execa(binary, ['render', '-f', file, '-o', out, ...common()], { reject: false, stdin: 'ignore' });
    // Kill it the moment its staging folder appears: it is writing then.
    const watcher = watch(out);
    await new Promise<void>((resolve) =>
      watcher.on('change', (_event, name) => {
        if (String(name).startsWith('.i2n-staging-')) resolve();
      }),
    );
    child.kill('SIGKILL');
    watcher.close();
    const killed = await child;
    expect(killed.signal).toBe('SIGKILL');
    const left = await readdir(out);
    expect(left).toContain(lockName);
    expect(left.filter((name) => name.startsWith('.i2n-staging-'))).toHaveLength(1);
    expect(left).not.toContain('nginx.conf');

    const result = await render(tlsSites('after', 2).text, out, [], { timeout: 30_000 });
    expect(result.exitCode).toBe(0);
    expect((await readdir(out)).sort()).toEqual(['auth', 'ca', 'client', 'nginx.conf', 'tls']);
    expect((await readdir(join(out, 'tls'))).sort()).toEqual(['default.pem', 'web_tls-after-site-0.pem', 'web_tls-after-site-1.pem']);
  });

  it('removes staging folders and the temp files of older versions, and nothing that is not ours', async () => {
    const out = join(await freshDir('leftovers'), 'out');
    expect((await render(tlsSites('left', 1).text, out)).exitCode).toBe(0);
    await mkdir(join(out, '.i2n-staging-0123456789ab', 'tls'), { recursive: true });
    await writeFile(join(out, '.i2n-staging-0123456789ab', 'tls', 'web_x.pem'), 'key material');
    await writeFile(join(out, '.i2n-staging-0123456789ab', 'nginx.conf'), 'half a config');
    // Older versions wrote each file as <file>.<12 hex>.tmp and renamed it into place.
    await writeFile(join(out, 'nginx.conf.0a1b2c3d4e5f.tmp'), 'half a config');
    await writeFile(join(out, 'tls', 'web_tls-left-site-0.pem.0a1b2c3d4e5f.tmp'), 'key material');
    await writeFile(join(out, 'notes.tmp'), 'a user file');
    await mkdir(join(out, 'extra'));

    // Even a render whose check fails cleans up: it holds the lock, so the leftovers are nobody's.
    const result = await render(tlsSites('left', 1).text, out, ['--check', '--nginx-bin', nginxBin, '--stream-module', '/nonexistent/x.so']);
    expect(result.exitCode).toBe(2);
    expect((await readdir(out)).sort()).toEqual(['.i2n-rejected', 'auth', 'ca', 'client', 'extra', 'nginx.conf', 'notes.tmp', 'tls']);
    expect((await readdir(join(out, 'tls'))).sort()).toEqual(['default.pem', 'web_tls-left-site-0.pem']);
  });
});

/** Whether this process may mount a tmpfs (root, and a sandbox that allows it). */
function canMountTmpfs(): boolean {
  const probe = join(tmpdir(), `ingress2nginx-mount-probe-${process.pid}`);
  try {
    execaSync('mkdir', ['-p', probe]);
    execaSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe]);
    execaSync('umount', [probe]);
    return true;
  } catch {
    return false;
  } finally {
    execaSync('rm', ['-rf', probe]);
  }
}
const mountable = canMountTmpfs();

describe('environment errors: one line, exit 2', () => {
  it('the output is a file', async () => {
    const file = join(await freshDir('output-file'), 'out');
    await writeFile(file, 'not a folder');
    expectEnvironmentError(await cli(['render', '-f', termination, '-o', file, ...common()]), `the output ${file} exists and is not a folder`);
  });

  it('the output is under a file', async () => {
    const file = join(await freshDir('under-file'), 'file');
    await writeFile(file, 'not a folder');
    const out = join(file, 'out');
    expectEnvironmentError(
      await cli(['render', '-f', termination, '-o', out, ...common()]),
      `cannot create the output folder ${out}: a part of the path is not a folder`,
    );
  });

  it('the output folder cannot be created, even by root (/proc)', async () => {
    expectEnvironmentError(
      await cli(['render', '-f', termination, '-o', '/proc/ingress2nginx-out', ...common()], { timeout: 20_000 }),
      'cannot create the output folder /proc/ingress2nginx-out: no such file or folder',
    );
  });

  it('the output folder is not writable, even by root (/sys)', async () => {
    expectEnvironmentError(
      await cli(['render', '-f', termination, '-o', '/sys/ingress2nginx-out', ...common()], { timeout: 20_000 }),
      /^ingress2nginx: cannot create the output folder \/sys\/ingress2nginx-out: (operation not permitted|permission denied|read-only file system)$/m,
    );
  });

  it('a file name too long', async () => {
    const out = join(await freshDir('long'), 'x'.repeat(300));
    expectEnvironmentError(await cli(['render', '-f', termination, '-o', out, ...common()]), `cannot create the output folder ${out}: file name too long`);
  });

  it('--check with a run dir that cannot be created', async () => {
    const out = join(await freshDir('run-dir'), 'out');
    const result = await cli(['render', '-f', termination, '-o', out, '--run-dir', '/proc/ingress2nginx-run', '--stream-module', streamModule, '--check'], {
      timeout: 20_000,
    });
    expectEnvironmentError(result, 'cannot create the run dir /proc/ingress2nginx-run: no such file or folder');
    expect(existsSync(join(out, 'nginx.conf'))).toBe(false);
  });

  it('--check with an nginx binary that cannot be run', async () => {
    const dir = await freshDir('nginx-not-executable');
    const notExecutable = join(dir, 'nginx');
    await writeFile(notExecutable, '#!/bin/sh\n', { mode: 0o644 });
    const result = await cli(['render', '-f', termination, '-o', join(dir, 'out'), ...common(), '--check', '--nginx-bin', notExecutable]);
    expectEnvironmentError(result, `cannot run the nginx binary "${notExecutable}": permission denied`);
  });

  it('the same HTTP and HTTPS port says why, and writes nothing', async () => {
    const out = join(await freshDir('same-port'), 'out');
    const result = await cli(['render', '-f', termination, '-o', out, ...common(), '--http-port', '8443', '--https-port', '8443']);
    expectEnvironmentError(result, 'ingress2nginx: --http-port and --https-port must differ (both are 8443)');
    expect(existsSync(out)).toBe(false);
  });

  it('--endpoint-resolver asks for --upstreams endpoints and a port of its own, and says why', async () => {
    const out = join(await freshDir('endpoint-resolver'), 'out');
    const withServiceUpstreams = await cli(['render', '-f', termination, '-o', out, ...common(), '--endpoint-resolver', '10053']);
    expectEnvironmentError(withServiceUpstreams, 'ingress2nginx: --endpoint-resolver needs --upstreams endpoints: with cluster IPs there is nothing to resolve');
    const samePort = await cli(['render', '-f', termination, '-o', out, ...common(), '--upstreams', 'endpoints', '--endpoint-resolver', '10054']);
    expectEnvironmentError(samePort, 'ingress2nginx: --endpoint-resolver 10054 is also the --http-port, --https-port or --unavailable-port');
    expect(existsSync(out)).toBe(false);
  });

  describe.skipIf(!mountable)('on a tmpfs of our own (needs root and mount)', () => {
    const mounts: string[] = [];
    async function tmpfs(options: string): Promise<string> {
      const dir = await freshDir('tmpfs');
      await execa('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
      mounts.push(dir);
      return dir;
    }
    afterAll(async () => {
      for (const dir of mounts) await execa('umount', [dir], { reject: false });
    });

    it('the disk is full: exit 2, the previous config intact, nothing staged left', async () => {
      const disk = await tmpfs('size=64k');
      const out = join(disk, 'out');
      expect((await render(tlsSites('small', 1).text, out)).exitCode).toBe(0);
      const previous = await snapshotFolder(out);

      const result = await render(tlsSites('large', 40).text, out);
      expectEnvironmentError(result, `cannot write into ${out}: no space left on the device`);
      expect(await snapshotFolder(out)).toEqual(previous);
      expect((await readdir(out)).sort()).toEqual(['auth', 'ca', 'client', 'nginx.conf', 'tls']);
    });

    it('the output folder is on a read-only file system', async () => {
      const disk = await tmpfs('size=1m');
      const out = join(disk, 'out');
      expect((await render(tlsSites('ro', 1).text, out)).exitCode).toBe(0);
      const previous = await snapshotFolder(out);
      await execa('mount', ['-o', 'remount,ro', disk]);

      const result = await render(tlsSites('ro', 2).text, out);
      expectEnvironmentError(result, `cannot lock the output folder ${out}: read-only file system`);
      expect(await snapshotFolder(out)).toEqual(previous);
    });
  });
});
