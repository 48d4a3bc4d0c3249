import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { riskyRules, type RiskyRule } from '../../src/report/risky.js';
import { runCli } from '../support/cli.js';
import { testNowText } from '../support/options.js';
import { fixtureCases, fixturesRoot, goldenOptions } from '../support/golden.js';

/**
 * Golden files of `diff --base-manifests`: every fixture case against an empty base
 * (`fixtures/<case>/expected/diff.{txt,json,md}`), and for every risky-change rule a pair that fires
 * it and a near miss that must not (`fixtures/risky/<rule>/{fires,quiet}/{base,new}`).
 * Update after an intended change with `npx vitest run test/golden -u`, and review the diff.
 */
const formats = [
  { format: 'text', file: 'diff.txt' },
  { format: 'json', file: 'diff.json' },
  { format: 'markdown', file: 'diff.md' },
] as const;

const riskyRoot = join(fixturesRoot, 'risky');
const riskyCases = (Object.keys(riskyRules) as RiskyRule[]).flatMap((rule) =>
  (['fires', 'quiet'] as const).map((variant) => ({ rule, variant, dir: `fixtures/risky/${rule}/${variant}` })),
);

function riskyArgs(dir: string): string[] {
  const argsFile = join(dir, 'args');
  const extra = existsSync(argsFile) ? readFileSync(argsFile, 'utf8').trim().split(/\s+/) : [];
  return ['diff', '-f', `${dir}/new`, '--base-manifests', `${dir}/base`, '--run-dir', '/tmp/ingress2nginx-golden', '--now', testNowText, ...extra];
}

describe.each(riskyCases)('risky change $rule ($variant)', ({ rule, variant, dir }) => {
  it(variant === 'fires' ? 'is flagged, and nothing else is' : 'is not flagged', async () => {
    const result = await runCli([...riskyArgs(dir), '--format', 'json']);
    expect(result.stderr).not.toContain('internal error');
    const flagged = (JSON.parse(result.stdout) as { risky: { rule: string }[] }).risky.map((r) => r.rule);
    if (variant === 'fires') {
      expect(flagged).toEqual([rule]);
      expect(result.exitCode).toBe(1);
    } else {
      expect(flagged).toEqual([]);
    }
  });

  it.each(formats)('prints the diff as $format', async ({ format, file }) => {
    const result = await runCli([...riskyArgs(dir), '--format', format]);
    await expect(result.stdout).toMatchFileSnapshot(join(riskyRoot, rule, variant, 'expected', file));
  });
});

describe.each(fixtureCases)('fixture %s', (name) => {
  it.each(formats)('against an empty base, as $format', async ({ format, file }) => {
    const result = await runCli(['diff', '-f', `fixtures/${name}/input`, '--base-manifests', 'fixtures/risky/empty.yaml', ...goldenOptions(name), '--format', format]);
    expect(result.stderr).not.toContain('internal error');
    expect(result.exitCode).toBe(1);
    await expect(result.stdout).toMatchFileSnapshot(join(fixturesRoot, name, 'expected', file));
  });

  it('against itself: no change, exit 0', async () => {
    const input = `fixtures/${name}/input`;
    const result = await runCli(['diff', '-f', input, '--base-manifests', input, ...goldenOptions(name)]);
    expect(result.stdout).toMatch(/^No route changes\./);
    expect(result.exitCode).toBe(0);
  });
});
