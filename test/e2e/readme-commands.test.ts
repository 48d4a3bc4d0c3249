import { chmod, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { requireNginx } from '../support/nginx.js';
import { freePorts } from '../support/ports.js';

/**
 * The documentation's commands, run as the pages write them: the quick start's render and the nginx
 * that runs its output (README.md), the migration audit (docs/migrating.md, and the one README.md
 * shows), and the steps of the "Review in CI" job on the helm-template example (docs/review.md). Only
 * what cannot be the same here is replaced: ports and the run dir (so that runs on one machine do not
 * collide), the base checkout's path, and `ingress2nginx` (this checkout's build).
 */

const repo = join(import.meta.dirname, '..', '..');

/** The first fenced block of `language` after the line of `page` that contains `marker`. */
function blockAfter(page: string, marker: string, language: string): string {
  const text = readFileSync(join(repo, page), 'utf8');
  const start = text.indexOf(marker);
  expect(start, `${page} has no "${marker}"`).toBeGreaterThan(-1);
  const open = text.indexOf(`\n\`\`\`${language}\n`, start);
  expect(open, `${page} has no ${language} block after "${marker}"`).toBeGreaterThan(-1);
  const close = text.indexOf('\n```\n', open + 1);
  return text.slice(open + language.length + 5, close + 1);
}

let work: string;
let shim: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ingress2nginx-readme-'));
  // `ingress2nginx` on PATH: this checkout's build, as `npm install -g` would link it.
  shim = join(work, 'shim');
  await mkdir(shim);
  await writeFile(join(shim, 'ingress2nginx'), `#!/bin/sh\nexec node ${join(repo, 'bin', 'ingress2nginx')} "$@"\n`);
  await chmod(join(shim, 'ingress2nginx'), 0o755);
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function bash(script: string, cwd: string, env: Record<string, string> = {}) {
  return execa('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
    cwd,
    env: { ...env, PATH: `${shim}:${process.env['PATH'] ?? ''}` },
    reject: false,
    stdin: 'ignore',
  });
}

describe('README.md quick start: run the rendered config', () => {
  it('renders examples/ and nginx serves it with -p out/ -c nginx.conf', async () => {
    const lines = blockAfter('README.md', 'Run the rendered config', 'sh').trim().split('\n');
    expect(lines).toHaveLength(2);
    const [httpPort, httpsPort] = await freePorts(2);
    // As `mkdir -p` makes it (mkdtemp's is private): nginx's workers reach the sockets in it.
    const runDir = await mkdtemp('/tmp/i2n-readme-');
    await chmod(runDir, 0o755);
    const here = (line: string) =>
      line.replaceAll('8080', String(httpPort)).replaceAll('8443', String(httpsPort)).replaceAll('/tmp/i2n', runDir).replace(/\bnginx -p/, `${requireNginx().binary} -p`);
    const cwd = join(work, 'quick-start');
    await mkdir(cwd);
    await symlink(join(repo, 'bin'), join(cwd, 'bin'));
    await symlink(join(repo, 'examples'), join(cwd, 'examples'));

    const render = await bash(here(lines[0]!), cwd);
    expect(render.exitCode, render.stderr).toBe(0);
    expect(render.stderr).toMatch(/^wrote out\/nginx\.conf: /m);

    const nginx = bash(here(lines[1]!), cwd);
    try {
      const certificate = await servedCertificate(httpsPort!, 'shop.example.com', () => nginx.exitCode === null);
      expect(certificate.subject.CN).toBe('shop.example.com');
      expect(await plainStatus(httpPort!, 'shop.example.com')).toBe(308);
    } finally {
      const pid = Number((await readFile(join(runDir, 'nginx.pid'), 'utf8').catch(() => '')).trim());
      if (pid > 0) process.kill(pid, 'SIGQUIT');
      const result = await nginx;
      await rm(runDir, { recursive: true, force: true });
      expect(result.stderr).not.toMatch(/\[emerg\]/);
    }
  });
});

/** The certificate nginx presents for `servername`, once it listens (polled while `running`). */
async function servedCertificate(port: number, servername: string, running: () => boolean): Promise<tls.PeerCertificate> {
  for (let attempt = 0; attempt < 200 && running(); attempt++) {
    const certificate = await new Promise<tls.PeerCertificate | undefined>((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate());
        socket.end();
      });
      socket.once('error', () => resolve(undefined));
    });
    if (certificate) return certificate;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('nginx did not start serving');
}

function plainStatus(port: number, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/', headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode);
    })
      .once('error', reject)
      .end();
  });
}

describe('docs/migrating.md: the audit commands', () => {
  it('run on the helm-template example (all but --cluster)', async () => {
    const cwd = join(work, 'audit');
    await cp(join(repo, 'examples', 'helm-template'), join(cwd, 'manifests'), { recursive: true });
    const lines = blockAfter('docs/migrating.md', 'ask it what\nit would do with yours', 'sh').trim().split('\n').filter((line) => !line.includes('--cluster'));
    expect(lines).toHaveLength(3);
    // README.md's "Coming from ingress-nginx" shows the first of them: it is run here too.
    const front = blockAfter('README.md', '## Coming from ingress-nginx', 'sh').trim().split('\n');
    expect(front).toHaveLength(1);
    expect(lines[0]!.replace(/\s+#.*$/, '')).toBe(front[0]);
    for (const line of lines) {
      const result = await bash(line, cwd);
      expect(result.exitCode, `${line}\n${result.stderr}`).toBe(0);
    }
    expect(await readFile(join(cwd, 'migration.md'), 'utf8')).toMatch(/^# ingress2nginx migration report/);
    expect(JSON.parse((await bash(lines[2]!, cwd)).stdout)).toEqual([]);
  });
});

interface Step {
  readonly name?: string;
  readonly id?: string;
  readonly if?: string;
  readonly run?: string;
}

describe('docs/review.md "Review in CI": the job on the helm-template example with a path added', () => {
  it('validates clean, reports the added route with no risky change, writes the page, and passes', async () => {
    const job = parse(blockAfter('docs/review.md', '## Review in CI', 'yaml')) as { jobs: { review: { steps: Step[] } } };
    const steps = job.jobs.review.steps;
    const cwd = join(work, 'ci', 'repo');
    const base = join(work, 'ci', 'base');
    await cp(join(repo, 'examples', 'helm-template'), join(base, 'manifests'), { recursive: true });
    await cp(join(repo, 'examples', 'helm-template'), join(cwd, 'manifests'), { recursive: true });
    const podinfo = join(cwd, 'manifests', 'podinfo.yaml');
    const withApi = (await readFile(podinfo, 'utf8')).replace(
      '          - path: /\n',
      '          - path: /api\n            pathType: Prefix\n            backend:\n              service:\n                name: podinfo\n                port:\n                  number: 9898\n          - path: /\n',
    );
    await writeFile(podinfo, withApi);
    const githubOutput = join(work, 'ci', 'github-output');
    await writeFile(githubOutput, '');

    for (const name of ['Validate (SARIF for code scanning)', 'Route diff against the target branch', 'Review page']) {
      const step = steps.find((s) => s.name === name);
      expect(step?.run, name).toBeDefined();
      const result = await bash(step!.run!.replaceAll('/tmp/base/', `${base}/`), cwd, { GITHUB_OUTPUT: githubOutput });
      expect(result.exitCode, `${name}\n${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout, name).not.toContain('input has errors');
      expect(result.stderr, name).not.toContain('internal error');
    }

    const sarif = JSON.parse(await readFile(join(cwd, 'ingress2nginx.sarif'), 'utf8')) as { runs: { results: { level: string }[] }[] };
    expect(sarif.runs[0]!.results.filter((r) => r.level === 'error')).toEqual([]);
    const diff = JSON.parse(await readFile(join(cwd, 'route-diff.json'), 'utf8')) as { summary: { added: number; risky: number } };
    // The path added before / moves it to the next index of the same Ingress: no change of its route.
    expect(diff.summary).toMatchObject({ added: 1, risky: 0, changedRoutes: 0 });
    expect(await readFile(join(cwd, 'route-diff.md'), 'utf8')).toContain('/api (Prefix)');
    expect(existsSync(join(cwd, 'review.html'))).toBe(true);

    // The last step fails the job on risky changes; its condition is false here.
    const gate = steps.at(-1)!;
    expect(gate.if).toBe("steps.diff.outputs.risky != '0'");
    expect(steps.find((s) => s.id === 'diff')?.name).toBe('Route diff against the target branch');
    expect((await readFile(githubOutput, 'utf8')).trim()).toBe('risky=0');
  });
});
