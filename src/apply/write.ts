import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, link, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { mainConfigName, type OutputFile } from '../model/nginx.js';
import { environment, EnvironmentError, makeFolder, reason } from './environment.js';
import type { FileOwner } from './worker-user.js';

/** Folders under the output directory that hold only what we wrote; stale files in them are removed. */
export const managedFolders = ['tls', 'ca', 'client', 'auth'] as const;

const lockName = '.ingress2nginx.lock';
const stagingPrefix = '.i2n-staging-';
/** Where the last config that nginx rejected is kept, so that the line in nginx's message can be read. */
const rejectedFolderName = '.i2n-rejected';
/** What the last commit that was asked to keep it replaced, until it is dropped or restored. */
const previousFolderName = '.i2n-previous';

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}

/** A set of files written into a staging folder inside the output folder, not yet visible to nginx. */
export interface Staged {
  /** Path of the staging folder (relative when the output folder is); `nginx -t` can check its `nginx.conf`. */
  readonly dir: string;
  readonly files: readonly OutputFile[];
  /** Paths whose bytes, mode and owner were in place when staged: staged as a hard link to that file where links work. */
  readonly unchanged: ReadonlySet<string>;
}

export interface CommitResult {
  /** With `keepPrevious`: the folder that holds what this commit replaced or removed, for `restorePrevious`. */
  readonly previous?: string;
  /** Paths (relative to the output folder) whose bytes or mode changed and were replaced. */
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
  /** Staging folders made by `stage` and not yet committed, discarded or kept; `close` removes them. */
  private readonly pending = new Set<string>();

  private constructor(
    readonly dir: string,
    private readonly lock: HeldLock,
    /** Owner of the files nginx's workers read (`readByWorkers`), when we write as root. */
    private readonly workerOwner: FileOwner | undefined,
  ) {}

  /** Creates the folder if needed, takes the lock and removes what a crashed earlier run left behind. */
  static async open(dir: string, options: { readonly lockTimeoutMs?: number; readonly workerOwner?: FileOwner } = {}): Promise<OutputFolder> {
    // Whatever keeps stat from finding a folder, creating one says best what is wrong.
    const info = await stat(dir).catch(() => undefined);
    if (info === undefined) await environment(`cannot create the output folder ${dir}`, () => makeFolder(dir));
    else if (!info.isDirectory()) throw new EnvironmentError(`the output ${dir} exists and is not a folder`);
    const folder = new OutputFolder(dir, await acquireLock(join(dir, lockName), options.lockTimeoutMs ?? 60_000), options.workerOwner);
    try {
      await environment(`cannot clean up the output folder ${dir}`, () => folder.removeLeftovers());
    } catch (error) {
      await folder.close();
      throw error;
    }
    return folder;
  }

  /** Where `keepRejected` puts a config nginx rejected. */
  get rejectedDir(): string {
    return join(this.dir, rejectedFolderName);
  }

  /**
   * Puts every file into a new staging folder, with its final mode; nothing in the output changes. A file
   * whose bytes, mode and owner are in place already is staged as a hard link to it rather than written:
   * on a disk where creating a file costs half a millisecond, writing 2,000 unchanged key files again took
   * a second of every sync, and a link costs a sixtieth of that.
   */
  async stage(files: readonly OutputFile[]): Promise<Staged> {
    for (const file of files) assertSafePath(file.path);
    const dir = join(this.dir, `${stagingPrefix}${randomBytes(6).toString('hex')}`);
    this.pending.add(dir);
    const unchanged = new Set<string>();
    try {
      await environment(`cannot write into ${this.dir}`, async () => {
        for (const folder of new Set(files.map((f) => dirname(join(dir, f.path))))) await makeFolder(folder);
        await forEachLimited(files, parallelWrites, async (file) => {
          const path = join(dir, file.path);
          const live = join(this.dir, file.path);
          if (await isInPlace(live, file, this.workerOwner)) {
            unchanged.add(file.path);
            if (await linkIfPossible(live, path)) return;
          }
          await writeFile(path, file.contents.length > chunkLength ? chunks(file.contents) : file.contents, {
            mode: file.mode,
            flag: 'wx',
          });
          await chmod(path, file.mode);
          if (file.readByWorkers && this.workerOwner) await chown(path, this.workerOwner.uid, this.workerOwner.gid);
        });
      });
    } catch (error) {
      await this.discard({ dir, files, unchanged });
      throw error;
    }
    return { dir, files, unchanged };
  }

  /**
   * Moves the staged files into place. A file whose bytes and mode are unchanged is left alone (nginx
   * and the file's readers see no new inode), so an unchanged render changes nothing on disk. Staging
   * compared every file with the one in place, so only those it found unchanged are looked at again, in
   * case another commit came between. The config in place is now the current one: a rejected config kept
   * from before is removed with its key material.
   */
  async commit(staged: Staged, options: { readonly keepPrevious?: boolean } = {}): Promise<CommitResult> {
    const written: string[] = [];
    const removed: string[] = [];
    const previous = options.keepPrevious ? join(this.dir, previousFolderName) : undefined;
    await environment(`cannot write into ${this.dir}`, async () => {
      const ordered = [...staged.files.filter((f) => f.path !== mainConfigName), ...staged.files.filter((f) => f.path === mainConfigName)];
      const changed = await mapLimited(ordered, parallelWrites, async (file) => !(await this.stillInPlace(staged, file)));
      for (const folder of managedFolders) await makeFolder(join(this.dir, folder));
      if (previous) {
        await rm(previous, { recursive: true, force: true });
        for (const folder of managedFolders) await makeFolder(join(previous, folder));
      }
      // Key files in parallel, then nginx.conf, last in the list: it must never name a key file that is not in place yet.
      const move = async (file: OutputFile): Promise<void> => {
        // The file it replaces stays reachable for a restore: a second name, no copy of the bytes.
        if (previous) await link(join(this.dir, file.path), join(previous, file.path)).catch(ignoreMissing);
        await rename(join(staged.dir, file.path), join(this.dir, file.path));
      };
      const moving = ordered.filter((_, index) => changed[index]);
      const keyFiles = moving.filter((file) => file.path !== mainConfigName);
      await forEachLimited(keyFiles, parallelWrites, move);
      for (const file of moving.filter((f) => f.path === mainConfigName)) await move(file);
      written.push(...moving.map((file) => file.path));
      const wanted = new Set(staged.files.map((f) => f.path));
      for (const folder of managedFolders) {
        for (const name of await listFiles(join(this.dir, folder))) {
          if (wanted.has(`${folder}/${name}`)) continue;
          if (previous) await rename(join(this.dir, folder, name), join(previous, folder, name));
          else await rm(join(this.dir, folder, name), { force: true });
          removed.push(`${folder}/${name}`);
        }
      }
      await rm(this.rejectedDir, { recursive: true, force: true });
    });
    await this.discard(staged);
    return { written, removed, ...(previous && { previous }) };
  }

  /** Staging found `file` in place, and it still is: the staged link names the file in place, or its bytes are read again. */
  private async stillInPlace(staged: Staged, file: OutputFile): Promise<boolean> {
    if (!staged.unchanged.has(file.path)) return false;
    const live = join(this.dir, file.path);
    return (await isSameFile(live, join(staged.dir, file.path))) || (await isInPlace(live, file, this.workerOwner));
  }

  /**
   * Puts back what `commit(…, { keepPrevious: true })` replaced and removed, and takes away the files it
   * added: the folder is then as it was before that commit (key files first, `nginx.conf` last).
   */
  async restorePrevious(commit: CommitResult): Promise<void> {
    const previous = commit.previous;
    if (!previous) throw new Error('this commit kept no previous files');
    await environment(`cannot restore the previous config in ${this.dir}`, async () => {
      const back = [...commit.written, ...commit.removed].filter((path) => existsSync(join(previous, path)));
      const ordered = [...back.filter((p) => p !== mainConfigName), ...back.filter((p) => p === mainConfigName)];
      for (const path of ordered) await rename(join(previous, path), join(this.dir, path));
      const restored = new Set(back);
      for (const path of commit.written) if (!restored.has(path)) await rm(join(this.dir, path), { force: true });
      await rm(previous, { recursive: true, force: true });
    });
  }

  /** Forgets the files a commit kept for a restore. */
  async dropPrevious(commit: CommitResult): Promise<void> {
    if (commit.previous) await rm(commit.previous, { recursive: true, force: true });
  }

  async discard(staged: Staged): Promise<void> {
    await environment(`cannot clean up ${staged.dir}`, () => rm(staged.dir, { recursive: true, force: true }));
    this.pending.delete(staged.dir);
  }

  /** Keeps a staged config that nginx rejected as `DIR/.i2n-rejected/` (replacing the previous one); returns its path. */
  async keepRejected(staged: Staged): Promise<string> {
    const kept = this.rejectedDir;
    await environment(`cannot keep the rejected config in ${kept}`, async () => {
      await rm(kept, { recursive: true, force: true });
      await rename(staged.dir, kept);
    });
    this.pending.delete(staged.dir);
    return kept;
  }

  /**
   * Removes what is still staged and releases the lock. Never throws: it runs on the way out of a
   * failure that is the message to report, and whatever it cannot remove the next `open` does.
   */
  async close(): Promise<void> {
    for (const dir of this.pending) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    this.pending.clear();
    await releaseLock(this.lock).catch(() => undefined);
  }

  /**
   * What a run that was killed left behind: its staging folders and lock files, and the `*.tmp` files of
   * versions that wrote each file through a temp name beside it. We hold the lock, so no live run owns
   * any of it, except the lock candidates of runs waiting for us.
   */
  private async removeLeftovers(): Promise<void> {
    for (const entry of await readdir(this.dir, { withFileTypes: true })) {
      const path = join(this.dir, entry.name);
      if (entry.isDirectory() && (entry.name.startsWith(stagingPrefix) || entry.name === previousFolderName)) {
        await rm(path, { recursive: true, force: true });
      } else if (entry.isFile() && entry.name.startsWith(`${lockName}.`) && (await isLeftByDeadProcess(path))) {
        await rm(path, { force: true });
      } else if (entry.isFile() && entry.name.startsWith(`${mainConfigName}.`) && oldTempFile.test(entry.name)) {
        await rm(path, { force: true });
      }
    }
    for (const folder of managedFolders) {
      for (const name of await listFiles(join(this.dir, folder))) {
        if (oldTempFile.test(name)) await rm(join(this.dir, folder, name), { force: true });
      }
    }
  }
}

/** `<file>.<12 hex digits>.tmp`, as versions before the staging folder named a file while writing it. */
const oldTempFile = /^.+\.[0-9a-f]{12}\.tmp$/;

/** Renders into `dir` in one go: open, stage, commit, close. */
export async function writeOutput(dir: string, files: readonly OutputFile[]): Promise<CommitResult> {
  const folder = await OutputFolder.open(dir);
  try {
    return await folder.commit(await folder.stage(files));
  } finally {
    await folder.close();
  }
}

/**
 * The only key files we write: certificate chains with their keys, CA bundles and revocation lists,
 * and the users of basic authentication, each in its managed folder.
 */
const keyFilePaths: readonly RegExp[] = [
  /^(tls|client)\/[a-z0-9._-]+\.pem$/,
  /^ca\/[a-z0-9._-]+\.(crt|crl)$/,
  /^auth\/[a-z0-9._-]+\.htpasswd$/,
];

/** Names are validated upstream; this keeps a mistake there from writing outside the output folder. */
function assertSafePath(path: string): void {
  if (path === mainConfigName) return;
  if (!keyFilePaths.some((pattern) => pattern.test(path)) || path.includes('..') || path.length > 255) {
    throw new Error(`refusing to write key material to unexpected path ${JSON.stringify(path)}`);
  }
}

/**
 * The lock is a file holding `pid@host`. It is written in full under a name of its own and then
 * hard-linked into place, which fails when the lock exists: so it is taken by exactly one process and
 * is never seen half-written. A lock whose process is gone (same host) was left by a crash and is taken
 * over; a live one is waited for, up to `timeoutMs`.
 */
interface HeldLock {
  readonly path: string;
  readonly owner: string;
}

async function acquireLock(path: string, timeoutMs: number): Promise<HeldLock> {
  const folder = dirname(path);
  const owner = `${process.pid}@${hostname()}`;
  const candidate = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await environment(`cannot lock the output folder ${folder}`, () => writeFile(candidate, `${owner}\n`, { flag: 'wx', mode: 0o644 }));
  acquiringHere.set(path, (acquiringHere.get(path) ?? 0) + 1);
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await linkExclusive(candidate, path)) {
        heldHere.add(path);
        return { path, owner };
      }
      const holder = await readHolder(path);
      if (holder === undefined) continue; // released between our link and our read
      if ((isDeadLocalProcess(holder) || isEarlierIncarnation(path, holder)) && (await breakStaleLock(path, holder, candidate))) continue;
      if (Date.now() > deadline) {
        throw new EnvironmentError(
          `the output folder ${folder} is locked by another ingress2nginx (${holder || 'unknown'}); if none is running, remove ${path}`,
        );
      }
      await delay(50);
    }
  } finally {
    const count = (acquiringHere.get(path) ?? 1) - 1;
    if (count === 0) acquiringHere.delete(path);
    else acquiringHere.set(path, count);
    await rm(candidate, { force: true });
  }
}

/**
 * Removes a lock whose holder is dead; false when another process is doing that right now. Breakers
 * take turns through a second lock file, and each looks again under it that the lock still names the
 * dead holder: a breaker that removed the lock on what it read before could remove the lock another
 * process has just taken over, and two processes would write at once.
 */
async function breakStaleLock(path: string, deadHolder: string, candidate: string): Promise<boolean> {
  const breaker = `${path}.break`;
  if (!(await linkExclusive(candidate, breaker))) return false;
  try {
    if ((await readHolder(path)) === deadHolder) await environment(`cannot remove the stale lock ${path}`, () => rm(path, { force: true }));
    return true;
  } finally {
    await rm(breaker, { force: true });
  }
}

/** Releases the lock if it is still ours (a lock someone removed by hand may have been taken since). */
async function releaseLock(lock: HeldLock): Promise<void> {
  heldHere.delete(lock.path);
  if ((await readHolder(lock.path)) === lock.owner) await rm(lock.path, { force: true });
}

/** Lock paths this process is taking now, with how many openers; an opener that got one leaves after. */
const acquiringHere = new Map<string, number>();

/**
 * A lock naming this very process, taken when no opener of this process was at it, was left by an
 * earlier process with the same pid on a host of the same name: a restarted container, whose first
 * process is pid 1 again. It is as stale as a dead holder's. (While this process opens or holds the
 * folder, the opener that holds it is still counted, so the lock is not taken from it.)
 */
function isEarlierIncarnation(path: string, holder: string): boolean {
  return holder === `${process.pid}@${hostname()}` && (acquiringHere.get(path) ?? 0) <= 1 && !heldHere.has(path);
}

/** Lock paths an OutputFolder of this process holds now. */
const heldHere = new Set<string>();

/** `link(from, to)`: true when it made `to`, false when `to` already exists. */
async function linkExclusive(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new EnvironmentError(`cannot lock the output folder ${dirname(to)}: ${reason(error)}`);
  }
}

/** The `pid@host` in a lock file; undefined when there is no such file. */
async function readHolder(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new EnvironmentError(`cannot read the lock ${path}: ${reason(error)}`);
  }
}

/** A lock or lock candidate whose writer has died on this host. */
async function isLeftByDeadProcess(path: string): Promise<boolean> {
  const holder = await readHolder(path);
  return holder !== undefined && isDeadLocalProcess(holder);
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

/** `link(from, to)`; false where the file system has no hard links (or `from` is gone), so the caller writes instead. */
async function linkIfPossible(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch {
    return false;
  }
}

/** Both names are one file: a link made when staging is still what is in place (no other commit came between). */
async function isSameFile(a: string, b: string): Promise<boolean> {
  const [first, second] = await Promise.all([stat(a).catch(() => undefined), stat(b).catch(() => undefined)]);
  return first !== undefined && second !== undefined && first.ino === second.ino && first.dev === second.dev;
}

/** The file at `path` has `file`'s bytes and mode already. */
async function isInPlace(path: string, file: OutputFile, workerOwner: FileOwner | undefined): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile() || (info.mode & 0o7777) !== file.mode || info.size !== Buffer.byteLength(file.contents)) return false;
  if (file.readByWorkers && workerOwner && (info.uid !== workerOwner.uid || info.gid !== workerOwner.gid)) return false;
  return (await readFile(path)).equals(Buffer.from(file.contents));
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
