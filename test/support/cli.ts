import { Readable } from 'node:stream';
import { run } from '../../src/cli/main.js';
import { testNow } from './options.js';

export interface CliRun {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI in-process with captured output (end-to-end tests spawn the built binary instead). */
export async function runCli(argv: readonly string[], options: { stdin?: string; now?: Date; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const exitCode = await run(argv, {
    stdin: Readable.from([options.stdin ?? '']),
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    now: () => options.now ?? testNow,
    ...(options.env && { env: options.env }),
  });
  return { exitCode, stdout, stderr };
}
