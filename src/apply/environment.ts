import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * A problem of the user's machine, not of the input or of our code (a folder that cannot be created, a
 * read-only or full disk, a path through a file): exit 2 with one line, never a stack trace.
 */
export class EnvironmentError extends Error {
  override name = 'EnvironmentError';
}

/**
 * Runs `action`; an error the operating system reported (it carries the failed `syscall`) becomes an
 * EnvironmentError with `what` in front. Anything else is ours and is rethrown as it is.
 */
export async function environment<T>(what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (isSystemError(error)) throw new EnvironmentError(`${what}: ${reason(error)}`);
    throw error;
  }
}

export function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string';
}

const words: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is not a folder',
  EEXIST: 'already exists',
  EISDIR: 'is a folder',
  ENAMETOOLONG: 'file name too long',
  ELOOP: 'too many symbolic links',
  EMFILE: 'too many open files',
  EIO: 'input/output error',
  EADDRINUSE: 'the address is already in use',
  EADDRNOTAVAIL: 'the address is not one of this machine',
};

/** The operating system's complaint in words, without Node's `CODE: … syscall 'path'` dressing. */
export function reason(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  return (code !== undefined ? words[code] : undefined) ?? message;
}

/**
 * `mkdir -p`. Not `mkdir(path, { recursive: true })`: Node 20's loops forever where the parent exists
 * but refuses children with ENOENT, as /proc does.
 */
export async function makeFolder(path: string, mode = 0o755): Promise<void> {
  try {
    await mkdir(path, { mode });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && (await stat(path)).isDirectory()) return;
    if (code !== 'ENOENT' || dirname(path) === path) throw error;
    await makeFolder(dirname(path), mode);
    await mkdir(path, { mode }).catch(async (retry: unknown) => {
      if ((retry as NodeJS.ErrnoException).code !== 'EEXIST' || !(await stat(path)).isDirectory()) throw retry;
    });
  }
}
