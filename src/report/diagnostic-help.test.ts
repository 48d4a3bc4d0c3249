import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnosticHelp, hasHelp } from './diagnostic-help.js';
import { fixtureCases, fixturesRoot } from '../../test/support/golden.js';

/** Source files of the project, tests left out. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * Every diagnostic code the golden cases produce, and every code the source reports by name, has a help
 * text of its own (SARIF rules show it).
 */
describe('diagnostic help', () => {
  const goldenCodes = new Set<string>();
  for (const name of fixtureCases) {
    const dir = join(fixturesRoot, name, 'expected');
    for (const file of readdirSync(dir).filter((f) => f === 'report.txt')) {
      for (const match of readFileSync(join(dir, file), 'utf8').matchAll(/ (?:error|warning|info) \[([a-z0-9-]+)\]/g)) goldenCodes.add(match[1]!);
    }
  }
  const reportedCodes = new Set<string>();
  for (const file of sourceFiles(join(fixturesRoot, '..', 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\.(?:error|warning|info|add)\(\s*(?:'[a-z]+',\s*)?'([a-z0-9]+(?:-[a-z0-9]+)+)'/g)) reportedCodes.add(match[1]!);
  }
  const codes = new Set([...goldenCodes, ...reportedCodes]);

  it('finds the codes of the golden cases and of the source', () => {
    expect(goldenCodes.size).toBeGreaterThan(20);
    expect(reportedCodes.size).toBeGreaterThan(40);
  });

  it.each([...codes].sort())('%s has a help text of its own', (code) => {
    expect(hasHelp(code)).toBe(true);
    expect(diagnosticHelp(code).length).toBeGreaterThan(30);
  });
});
