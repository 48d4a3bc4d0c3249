import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** How the test tools are found; scripts/ensure-test-tools.mjs finds them the same way. */

export function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `$variable` if set (and then only it), else `name` on PATH, else the first of `fallbacks` that is there. */
export function findExecutable(variable: string, name: string, fallbacks: readonly string[] = []): string | undefined {
  const fromEnvironment = process.env[variable];
  if (fromEnvironment) return isExecutableFile(fromEnvironment) ? fromEnvironment : undefined;
  const onPath = (process.env['PATH'] ?? '')
    .split(path.delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => path.join(dir, name))
    .find(isExecutableFile);
  return onPath ?? fallbacks.find(isExecutableFile);
}
