import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { testNowText } from './options.js';

/** Shared by the golden test and the tests that compare against golden renders. */

export const fixturesRoot = join(import.meta.dirname, '..', '..', 'fixtures');
export const goldenRunDir = '/tmp/ingress2nginx-golden';

/** Every `fixtures/<case>/` that has an `input/` folder, sorted. */
export const fixtureCases: readonly string[] = readdirSync(fixturesRoot)
  .filter((name) => existsSync(join(fixturesRoot, name, 'input')))
  .sort();

/** `render` arguments of a golden case: fixed run dir and clock, plus the case's own `args` file. */
export function goldenArgs(name: string, input: string, output: string): string[] {
  return ['render', '-f', input, '-o', output, ...goldenOptions(name)];
}

/** The translate flags of a golden case, for any command: fixed run dir and clock, plus its `args` file. */
export function goldenOptions(name: string): string[] {
  const argsFile = join(fixturesRoot, name, 'args');
  const extra = existsSync(argsFile) ? readFileSync(argsFile, 'utf8').trim().split(/\s+/).filter(Boolean) : [];
  return ['--run-dir', goldenRunDir, '--now', testNowText, ...extra];
}
