import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fixtureCases as cases, fixturesRoot, goldenOptions } from '../support/golden.js';

/**
 * The route table of every golden case, in each format: `fixtures/<case>/expected/routes.{txt,json,md}`.
 * Update after an intended change with `npx vitest run test/golden -u`, and review the diff.
 */
const formats = [
  { format: 'text', file: 'routes.txt' },
  { format: 'json', file: 'routes.json' },
  { format: 'markdown', file: 'routes.md' },
] as const;

describe.each(cases)('fixture %s', (name) => {
  it.each(formats)('prints the route table as $format', async ({ format, file }) => {
    const result = await runCli(['routes', '-f', `fixtures/${name}/input`, ...goldenOptions(name), '--format', format]);
    expect(result.stderr).not.toContain('internal error');
    expect([0, 1]).toContain(result.exitCode);
    if (format === 'json') expect(() => JSON.parse(result.stdout)).not.toThrow();
    await expect(result.stdout).toMatchFileSnapshot(join(fixturesRoot, name, 'expected', file));
  });
});
