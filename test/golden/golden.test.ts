import { managedFolders } from '../../src/apply/write.js';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/apply/check.js';
import { runCli } from '../support/cli.js';
import { fixtureCases as cases, fixturesRoot, goldenArgs, goldenRunDir as runDir } from '../support/golden.js';
import { nginxGeneration, requireNginx } from '../support/nginx.js';

/**
 * Golden files: each `fixtures/<case>/input/` renders to `fixtures/<case>/expected/nginx.conf`, with
 * its diagnostics and exit code in `report.txt`, Gateway API status in `status.json` (cases that have
 * any), and every golden config passes `nginx -t`. In the `pass` generation's run (see
 * vitest.config.ts) each case renders for nginx 1.28.2 (the pinned build) to `expected/nginx-pass.conf` instead, with the
 * same report and status, checked by that nginx.
 * Update after an intended change with `npx vitest run test/golden -u`, and review the diff.
 */

const generation = nginxGeneration();
/** A fixed version, so the golden bytes do not follow whichever newer nginx the build found. */
const generationArgs = generation === 'pass' ? ['--nginx-version', '1.28.2', '--stream-module', 'none'] : [];
const confName = generation === 'pass' ? 'nginx-pass.conf' : 'nginx.conf';

const outputs: string[] = [];
afterAll(async () => {
  for (const dir of outputs) await rm(dir, { recursive: true, force: true });
});

describe.each(cases)('fixture %s', (name) => {
  it('renders the golden config, diagnostics and key files, and nginx -t accepts it', async () => {
    const output = await mkdtemp(join(tmpdir(), `ingress2nginx-golden-${name}-`));
    outputs.push(output);
    const args = [...goldenArgs(name, `fixtures/${name}/input`, output), ...generationArgs];
    const result = await runCli(args);
    expect(result.stderr).not.toContain('internal error');

    const conf = await readFile(join(output, 'nginx.conf'), 'utf8');
    await expect(conf).toMatchFileSnapshot(join(fixturesRoot, name, 'expected', confName));

    const keyFiles: string[] = [];
    for (const folder of managedFolders) {
      const dir = join(output, folder);
      if (!existsSync(dir)) continue;
      for (const file of readdirSync(dir).sort()) {
        const mode = (await stat(join(dir, file))).mode & 0o777;
        keyFiles.push(`${folder}/${file} ${mode.toString(8)}`);
      }
    }
    const report = [
      `exit code: ${result.exitCode}`,
      '',
      'diagnostics:',
      // Without the progress line, which names the temporary output folder.
      result.stderr.replace(/^wrote .*\n/m, '').trimEnd(),
      '',
      'key files:',
      ...keyFiles,
      '',
    ].join('\n');
    await expect(report).toMatchFileSnapshot(join(fixturesRoot, name, 'expected', 'report.txt'));

    const json = await runCli([...args, '--format', 'json']);
    const status = (JSON.parse(json.stdout) as { status: Record<string, unknown> }).status;
    if (Object.keys(status).length > 0) {
      await expect(JSON.stringify(status, null, 2) + '\n').toMatchFileSnapshot(join(fixturesRoot, name, 'expected', 'status.json'));
    }

    const nginx = requireNginx();
    const check = await checkConfig(output, runDir, nginx.binary);
    expect(check.output).toBe('');
    expect(check.ok).toBe(true);
  });
});
