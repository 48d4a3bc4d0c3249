import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { requireNginx } from '../support/nginx.js';
import { freePorts } from '../support/ports.js';
import { eventually } from '../support/sidecar.js';

/** `ingress2nginx run` as a process: how it starts, refuses to start, and stops. Spawns the built binary. */

const binary = join(import.meta.dirname, '..', '..', 'bin', 'ingress2nginx');
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'i2n-run-e2e-'));
  await chmod(scratch, 0o755);
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('ingress2nginx run', () => {
  it('exits 2 with one clear line when there is no way to reach a cluster', async () => {
    const result = await execa(binary, ['run', '-o', join(scratch, 'none')], {
      reject: false,
      env: { PATH: process.env['PATH'] ?? '' },
      extendEnv: false,
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('ingress2nginx: no cluster access: pass --kubeconfig PATH, set KUBECONFIG, or run in a Pod with a service account token');
    expect(result.stdout).toBe('');
  });

  it('exits 2 naming a --kubeconfig that cannot be read', async () => {
    const result = await execa(binary, ['run', '-o', join(scratch, 'none'), '--kubeconfig', join(scratch, 'missing')], { reject: false });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^ingress2nginx: cannot load --kubeconfig .*missing/);
  });

  it('serves, then on SIGTERM stops nginx gracefully and exits 0', async () => {
    const api = await FakeApiServer.start({ tls: true, token: 'e2e', bookmarkIntervalMs: 500 });
    try {
      const kubeconfig = await api.writeKubeconfig();
      const [httpPort, httpsPort, metricsPort] = (await freePorts(3)) as [number, number, number];
      const runDir = await mkdtemp('/tmp/i2n-e2e-run-');
      const out = join(scratch, 'out');
      const child = execa(
        binary,
        [
          'run',
          ...['-o', out, '--run-dir', runDir, '--kubeconfig', kubeconfig, '--spawn-nginx'],
          ...['--nginx-bin', requireNginx().binary, '--http-port', String(httpPort), '--https-port', String(httpsPort)],
          ...['--metrics-address', `127.0.0.1:${metricsPort}`, '--log-format', 'json'],
        ],
        { reject: false },
      );
      const ready = () => fetch(`http://127.0.0.1:${metricsPort}/readyz`).then((r) => r.status, () => 0);
      expect(await eventually(ready, (s) => s === 200, 30_000)).toBe(200);
      const nginxPid = Number((await readFile(join(runDir, 'nginx.pid'), 'utf8')).trim());
      expect(nginxPid).toBeGreaterThan(0);

      child.kill('SIGTERM');
      const result = await child;
      expect(result.exitCode).toBe(0);
      // nginx was asked to quit and is gone: its pid file removed, its master not running.
      expect(existsSync(join(runDir, 'nginx.pid'))).toBe(false);
      expect(() => process.kill(nginxPid, 0)).toThrow();
      const lines = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { msg: string });
      expect(lines.map((l) => l.msg)).toContain('stopped');
      await rm(runDir, { recursive: true, force: true });
    } finally {
      await api.close();
    }
  });
});
