import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnosticHelp, hasHelp } from '../../src/report/diagnostic-help.js';
import { fixtureCases, fixturesRoot } from '../support/golden.js';

/** Every diagnostic code the golden cases produce has a help text of its own (SARIF rules show it). */
describe('diagnostic help', () => {
  const codes = new Set<string>();
  for (const name of fixtureCases) {
    const dir = join(fixturesRoot, name, 'expected');
    for (const file of readdirSync(dir).filter((f) => f === 'report.txt')) {
      for (const match of readFileSync(join(dir, file), 'utf8').matchAll(/ (?:error|warning|info) \[([a-z0-9-]+)\]/g)) codes.add(match[1]!);
    }
  }

  it('finds the codes of the golden cases', () => {
    expect(codes.size).toBeGreaterThan(20);
  });

  it.each([...codes].sort())('%s has a help text of its own', (code) => {
    expect(hasHelp(code)).toBe(true);
    expect(diagnosticHelp(code).length).toBeGreaterThan(30);
  });
});
