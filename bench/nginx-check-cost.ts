import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkConfig } from '../src/apply/check.js';
import { writeOutput } from '../src/apply/write.js';
import type { OutputFile } from '../src/model/files.js';

export interface NginxCheckCost {
  readonly ok: boolean;
  readonly output: string;
  readonly ms: number;
  /** Peak resident set of `nginx -t`, in bytes (GNU time's %M). */
  readonly peakRss: number;
}

/**
 * `nginx -t` on a build's files as the product runs it (`checkConfig`), with its wall time and peak
 * memory: nginx runs under GNU time through a wrapper given as the binary. `runDir` is the one the
 * build was given.
 */
export async function nginxCheckCost(files: readonly OutputFile[], runDir: string, nginxBin: string): Promise<NginxCheckCost> {
  const dir = await mkdtemp(join(tmpdir(), 'i2n-check-cost-'));
  try {
    await writeOutput(join(dir, 'out'), files);
    const rssFile = join(dir, 'rss');
    const wrapper = join(dir, 'nginx');
    await writeFile(wrapper, `#!/bin/sh\nexec /usr/bin/time -f %M -o '${rssFile}' '${nginxBin}' "$@"\n`);
    await chmod(wrapper, 0o755);
    const started = performance.now();
    const check = await checkConfig(join(dir, 'out'), runDir, wrapper);
    const ms = performance.now() - started;
    const kilobytes = Number((await readFile(rssFile, 'utf8')).trim().split('\n').pop());
    return { ok: check.ok, output: check.output, ms, peakRss: kilobytes * 1024 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
