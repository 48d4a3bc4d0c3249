import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { mainConfigName, type OutputFile } from '../model/nginx.js';
import { environment, EnvironmentError, makeFolder, reason } from './environment.js';

/** Folders under the output directory that hold only what we wrote; stale files in them are removed. */
export const managedFolders = ['tls', 'ca', 'client'] as const;

const lockName = '.ingress2nginx.lock';
const stagingPrefix = '.i2n-staging-';
/** Where the last config that nginx rejected is kept, so that the line in nginx's message can be read. */
export const rejectedFolderName = '.i2n-rejected';

/** A set of files written into a staging folder inside the output folder, not yet visible to nginx. */
export interface Staged {
  /** Absolute or relative path of the staging folder; its `nginx.conf` can be checked with `nginx -t`. */
  readonly dir: string;
  readonly files: readonly OutputFile[];
}

export interface CommitResult {
  /** Paths (relative to the output folder) whose bytes changed and were replaced. */
  readonly written: readonly string[];
  /** Stale key files removed from the managed folders. */
  readonly removed: readonly string[];
}

/**
 * The output folder, held under a lock while we write it. Files are first written in full into a
 * staging folder inside it (same file system, so the paths in nginx.conf resolve the same way there and
 * every move is an atomic rename), checked there if the caller wants, and only then moved into place:
 * key files first, `nginx.conf` last, stale key files removed after. A failed check leaves the folder as
 * it was. Two writers never interleave: the second waits for the lock.
 */
export class OutputFolder {
  private constructor(
    readonly dir: string,
    private readonly lockPath: string,
  ) {}

  /** Creates the folder if needed, takes the lock and removes what a crashed earlier run left behind. */
  static async open(dir: string, options: { readonly lockTimeoutMs?: number } = {}): Promise<OutputFolder> {
    // Whatever keeps stat from finding a folder, creating one says best what is wrong.
    const info = await stat(dir).catch(() => undefined);
    if (info === undefined) await environment(`cannot create the output folder ${dir}`, () => makeFolder(dir));
    else if (!info.isDirectory()) throw new EnvironmentError(`the output ${dir} exists and is not a folder`);
    const lockPath = join(dir, lockName);
    await acquireLock(lockPath, options.lockTimeoutMs ?? 60_000);
    const folder = new OutputFolder(dir, lockPath);
    try {
      await folder.removeLeftovers();
    } catch (error) {
      await folder.close();
      throw error;
    }
    return folder;
  }

  /** Writes every file into a new staging folder, with its final mode; nothing in the output changes. */
  async stage(files: readonly OutputFile[]): Promise<Staged> {
    for (const file of files) assertSafePath(file.path);
    const dir = join(this.dir, `${stagingPrefix}${randomBytes(6).toString('hex')}`);
    try {
      await environment(`cannot write into ${this.dir}`, async () => {
        for (const folder of new Set(files.map((f) => dirname(join(dir, f.path))))) {
          await mkdir(folder, { recursive: true, mode: 0o755 });
        }
        await forEachLimited(files, parallelWrites, async (file) => {
          const path = join(dir, file.path);
          await writeFile(path, file.contents.length > chunkLength ? chunks(file.contents) : file.contents, {
            mode: file.mode,
            flag: 'wx',
          });
          await chmod(path, file.mode);
        });
      });
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    return { dir, files };
  }

  /**
   * Moves the staged files into place. A file whose bytes are unchanged is left alone (nginx and the
   * file's readers see no new inode), so an unchanged render changes nothing on disk.
   */
  async commit(staged: Staged): Promise<CommitResult> {
    const written: string[] = [];
    const removed: string[] = [];
    await environment(`cannot write into ${this.dir}`, async () => {
      const ordered = [...staged.files.filter((f) => f.path !== mainConfigName), ...staged.files.filter((f) => f.path === mainConfigName)];
      const changed = await mapLimited(ordered, parallelWrites, async (file) => !(await sameContents(join(this.dir, file.path), file.contents)));
      for (const folder of managedFolders) await mkdir(join(this.dir, folder), { recursive: true, mode: 0o755 });
      // Sequential: nginx.conf, last in the list, must never name a key file that is not in place yet.
      for (const [index, file] of ordered.entries()) {
        if (!changed[index]) continue;
        await mkdir(dirname(join(this.dir, file.path)), { recursive: true, mode: 0o755 });
        await rename(join(staged.dir, file.path), join(this.dir, file.path));
        written.push(file.path);
      }
      const wanted = new Set(staged.files.map((f) => f.path));
      for (const folder of managedFolders) {
        for (const name of await listFiles(join(this.dir, folder))) {
          if (wanted.has(`${folder}/${name}`)) continue;
          await rm(join(this.dir, folder, name), { force: true });
          removed.push(`${folder}/${name}`);
        }
      }
    });
    await this.discard(staged);
    return { written, removed };
  }

  async discard(staged: Staged): Promise<void> {
    await rm(staged.dir, { recursive: true, force: true });
  }

  /** Keeps a staged config that nginx rejected as `DIR/.i2n-rejected/` (replacing the previous one); returns its path. */
  async keepRejected(staged: Staged): Promise<string> {
    const kept = join(this.dir, rejectedFolderName);
    await rm(kept, { recursive: true, force: true });
    await rename(staged.dir, kept);
    return kept;
  }

  async close(): Promise<void> {
    await rm(this.lockPath, { force: true });
  }

  /** Staging folders of a run that crashed (we hold the lock, so no live run owns one). */
  private async removeLeftovers(): Promise<void> {
    const entries = await environment(`cannot read the output folder ${this.dir}`, () => readdir(this.dir, { withFileTypes: true }));
    for (const entry of entries) {
      if (entry.isDirectory() && entry.name.startsWith(stagingPrefix)) {
        await rm(join(this.dir, entry.name), { recursive: true, force: true });
      }
    }
  }
}

/** Renders into `dir` in one go: open, stage, commit, close. */
export async function writeOutput(dir: string, files: readonly OutputFile[]): Promise<CommitResult> {
  const folder = await OutputFolder.open(dir);
  try {
    return await folder.commit(await folder.stage(files));
  } finally {
    await folder.close();
  }
}

/** Names are validated upstream; this keeps a mistake there from writing outside the output folder. */
function assertSafePath(path: string): void {
  if (path === mainConfigName) return;
  if (!/^(tls|ca|client)\/[a-z0-9._-]+\.(pem|crt)$/.test(path) || path.includes('..') || path.length > 255) {
    throw new Error(`refusing to write key material to unexpected path ${JSON.stringify(path)}`);
  }
}

/**
 * The lock is a file created exclusively, holding `pid@host`. A lock whose process is gone (same host)
 * was left by a crash and is taken over; a live one is waited for, up to `timeoutMs`.
 */
async function acquireLock(path: string, timeoutMs: number): Promise<void> {
  const owner = `${process.pid}@${hostname()}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await writeFile(path, `${owner}\n`, { flag: 'wx', mode: 0o644 });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new EnvironmentError(`cannot lock the output folder ${dirname(path)}: ${reason(error)}`);
      }
    }
    const holder = (await readFile(path, 'utf8').catch(() => '')).trim();
    if (holder !== '' && isDeadLocalProcess(holder)) {
      await rm(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new EnvironmentError(
        `the output folder ${dirname(path)} is locked by another ingress2nginx (${holder || 'unknown'}); if none is running, remove ${path}`,
      );
    }
    await delay(50);
  }
}

function isDeadLocalProcess(holder: string): boolean {
  const match = /^(\d+)@(.*)$/.exec(holder);
  if (!match || match[2] !== hostname()) return false;
  try {
    process.kill(Number(match[1]), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function sameContents(path: string, contents: string): Promise<boolean> {
  const current = await readFile(path).catch(() => undefined);
  return current !== undefined && current.length === Buffer.byteLength(contents) && current.equals(Buffer.from(contents));
}

const parallelWrites = 16;
const chunkLength = 1 << 20;

/**
 * A large config written from one string would be encoded into one Buffer as large as the file, on
 * top of the string; written piecewise, each piece is encoded on its own. No piece ends between the
 * two halves of a surrogate pair, so the bytes are the same.
 */
function* chunks(text: string): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + chunkLength, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield text.slice(start, end);
    start = end;
  }
}

/** Regular file names directly in `dir`, sorted; none when it does not exist. */
export async function listFiles(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => e.name).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** `action` on every item with at most `limit` at once; results in item order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, action: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  await forEachLimited([...items.keys()], limit, async (index) => {
    results[index] = await action(items[index] as T);
  });
  return results;
}

/**
 * Runs `action` on every item with at most `limit` running at once. Once one fails no new ones start;
 * it resolves or throws only after every started action has finished, so nothing is left writing.
 */
async function forEachLimited<T>(items: readonly T[], limit: number, action: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as T;
      try {
        await action(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
}
