import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fchmodSync,
  fchownSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { link, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { mainConfigName } from '../model/nginx.js';
import type { OutputFile } from '../model/files.js';
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
  /**
   * Paths whose bytes, mode and owner were in place when staged. A complete staging holds them as hard
   * links to the files in place (where links work); a partial one leaves them out.
   */
  readonly unchanged: ReadonlySet<string>;
  /** Every file is in `dir`, so `nginx -t` can check it there. */
  readonly complete: boolean;
  /** How many commits and restores the folder had made when this was staged. */
  readonly generation: number;
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
 *
 * The file operations themselves are synchronous. Each takes microseconds on a local disk, while each
 * `await` of an asynchronous one waits for a turn of the event loop: in a busy process (the cluster mode
 * under load, beside TLS clients in a test) that turn took 25 ms, and writing one changed file cost 600 ms
 * of the time from change to served.
 */
export class OutputFolder {
  /** Staging folders made by `stage` and not yet committed, discarded or kept; `close` removes them. */
  private readonly pending = new Set<string>();
  /** Commits and restores so far: a set staged before one of them compares its files again. */
  private generation = 0;

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
      await environment(`cannot clean up the output folder ${dir}`, async () => folder.removeLeftovers());
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
   * Puts the files into a new staging folder, with their final mode; nothing in the output changes. A
   * file whose bytes, mode and owner are in place already is not written again: a complete staging (the
   * default, for `nginx -t`) links it, a partial one (`complete: false`, for a commit without a check)
   * leaves it out. On a disk where creating a file costs half a millisecond, writing 2,000 unchanged key
   * files again took a second of every sync, and a link costs a sixtieth of that.
   */
  async stage(files: readonly OutputFile[], options: { readonly complete?: boolean } = {}): Promise<Staged> {
    const complete = options.complete ?? true;
    for (const file of files) assertSafePath(file.path);
    const dir = join(this.dir, `${stagingPrefix}${randomBytes(6).toString('hex')}`);
    this.pending.add(dir);
    const unchanged = new Set<string>();
    try {
      await environment(`cannot write into ${this.dir}`, async () => {
        mkdirSync(dir, { mode: 0o755 });
        const made = new Set<string>([dir]);
        for (const file of files) {
          const path = join(dir, file.path);
          if (isInPlace(join(this.dir, file.path), file, this.workerOwner)) {
            unchanged.add(file.path);
            if (!complete) continue;
            makeParent(path, made);
            if (linkIfPossible(join(this.dir, file.path), path)) continue;
          }
          makeParent(path, made);
          this.writeStaged(path, file);
        }
      });
    } catch (error) {
      await this.discard({ dir, files, unchanged, complete, generation: this.generation });
      throw error;
    }
    return { dir, files, unchanged, complete, generation: this.generation };
  }

  /**
   * Moves the staged files into place. A file whose bytes and mode are unchanged is left alone (nginx
   * and the file's readers see no new inode), so an unchanged render changes nothing on disk. Staging
   * compared every file with the one in place; when a commit or restore came between, those it found
   * unchanged are looked at again. The config in place is now the current one: a rejected config kept
   * from before is removed with its key material.
   */
  async commit(staged: Staged, options: { readonly keepPrevious?: boolean } = {}): Promise<CommitResult> {
    const written: string[] = [];
    const removed: string[] = [];
    const previous = options.keepPrevious ? join(this.dir, previousFolderName) : undefined;
    await environment(`cannot write into ${this.dir}`, async () => {
      const ordered = [...staged.files.filter((f) => f.path !== mainConfigName), ...staged.files.filter((f) => f.path === mainConfigName)];
      const moving = ordered.filter((file) => !this.stillInPlace(staged, file));
      for (const folder of managedFolders) makeFolderSync(join(this.dir, folder));
      if (previous) {
        rmSync(previous, { recursive: true, force: true });
        for (const folder of managedFolders) makeFolderSync(join(previous, folder));
      }
      // Key files first, then nginx.conf, last in the list: it must never name a key file that is not in place yet.
      for (const file of moving) {
        const from = join(staged.dir, file.path);
        // A partial staging left out a file it found in place, and a commit since has changed it.
        if (!existsSync(from)) {
          makeFolderSync(dirname(from));
          this.writeStaged(from, file);
        }
        // The file it replaces stays reachable for a restore: a second name, no copy of the bytes.
        if (previous) linkUnlessMissing(join(this.dir, file.path), join(previous, file.path));
        renameSync(from, join(this.dir, file.path));
      }
      written.push(...moving.map((file) => file.path));
      const wanted = new Set(staged.files.map((f) => f.path));
      for (const folder of managedFolders) {
        for (const name of listFilesSync(join(this.dir, folder))) {
          if (wanted.has(`${folder}/${name}`)) continue;
          if (previous) renameSync(join(this.dir, folder, name), join(previous, folder, name));
          else rmSync(join(this.dir, folder, name), { force: true });
          removed.push(`${folder}/${name}`);
        }
      }
      rmSync(this.rejectedDir, { recursive: true, force: true });
    });
    this.generation++;
    await this.discard(staged);
    return { written, removed, ...(previous && { previous }) };
  }

  /** Staging found `file` in place, and it still is: no commit came between, or the file is as staged. */
  private stillInPlace(staged: Staged, file: OutputFile): boolean {
    if (!staged.unchanged.has(file.path)) return false;
    if (staged.generation === this.generation) return true;
    const live = join(this.dir, file.path);
    return isSameFile(live, join(staged.dir, file.path)) || isInPlace(live, file, this.workerOwner);
  }

  /** Writes one file of a staging folder with its final mode (and owner, for what the workers read as root). */
  private writeStaged(path: string, file: OutputFile): void {
    const fd = openSync(path, 'wx', file.mode);
    try {
      for (const piece of chunks(file.contents)) writeSync(fd, piece);
      fchmodSync(fd, file.mode);
      if (file.readByWorkers && this.workerOwner) chownStaged(fd, path, this.workerOwner);
    } finally {
      closeSync(fd);
    }
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
      for (const path of ordered) renameSync(join(previous, path), join(this.dir, path));
      const restored = new Set(back);
      for (const path of commit.written) if (!restored.has(path)) rmSync(join(this.dir, path), { force: true });
      rmSync(previous, { recursive: true, force: true });
    });
    this.generation++;
  }

  /** Forgets the files a commit kept for a restore. */
  async dropPrevious(commit: CommitResult): Promise<void> {
    if (commit.previous) rmSync(commit.previous, { recursive: true, force: true });
  }

  async discard(staged: Staged): Promise<void> {
    await environment(`cannot clean up ${staged.dir}`, async () => rmSync(staged.dir, { recursive: true, force: true }));
    this.pending.delete(staged.dir);
  }

  /** Keeps a staged config that nginx rejected as `DIR/.i2n-rejected/` (replacing the previous one); returns its path. */
  async keepRejected(staged: Staged): Promise<string> {
    const kept = this.rejectedDir;
    await environment(`cannot keep the rejected config in ${kept}`, async () => {
      rmSync(kept, { recursive: true, force: true });
      renameSync(staged.dir, kept);
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
    for (const entry of readdirSync(this.dir, { withFileTypes: true })) {
      const path = join(this.dir, entry.name);
      if (entry.isDirectory() && (entry.name.startsWith(stagingPrefix) || entry.name === previousFolderName)) {
        rmSync(path, { recursive: true, force: true });
      } else if (entry.isFile() && entry.name.startsWith(`${lockName}.`) && (await isLeftByDeadProcess(path))) {
        rmSync(path, { force: true });
      } else if (entry.isFile() && entry.name.startsWith(`${mainConfigName}.`) && oldTempFile.test(entry.name)) {
        rmSync(path, { force: true });
      }
    }
    for (const folder of managedFolders) {
      for (const name of listFilesSync(join(this.dir, folder))) {
        if (oldTempFile.test(name)) rmSync(join(this.dir, folder, name), { force: true });
      }
    }
  }
}

/**
 * Gives a file the workers read to their user. Only a root without CAP_CHOWN fails here: say what to do
 * rather than "operation not permitted".
 */
function chownStaged(fd: number, path: string, owner: FileOwner): void {
  try {
    fchownSync(fd, owner.uid, owner.gid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
    throw new EnvironmentError(
      `cannot give ${basename(path)} to nginx's worker user (uid ${owner.uid}), which reads it at request time: this root process may not change owners (no CAP_CHOWN). Run ingress2nginx as the user nginx runs as`,
    );
  }
}

/** Creates the folder of `path` (and its parents) once per staging. */
function makeParent(path: string, made: Set<string>): void {
  const parent = dirname(path);
  if (made.has(parent)) return;
  makeFolderSync(parent);
  made.add(parent);
}

/** `mkdir -p` of a folder inside ours (the output folder itself exists). */
function makeFolderSync(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o755 });
}

function linkUnlessMissing(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch (error) {
    ignoreMissing(error as NodeJS.ErrnoException);
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
function linkIfPossible(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch {
    return false;
  }
}

/** Both names are one file: a link made when staging is still what is in place (no other commit came between). */
function isSameFile(a: string, b: string): boolean {
  const first = statSync(a, { throwIfNoEntry: false });
  const second = statSync(b, { throwIfNoEntry: false });
  return first !== undefined && second !== undefined && first.ino === second.ino && first.dev === second.dev;
}

/** The file at `path` has `file`'s bytes and mode already. */
function isInPlace(path: string, file: OutputFile, workerOwner: FileOwner | undefined): boolean {
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info?.isFile() || (info.mode & 0o7777) !== file.mode || info.size !== Buffer.byteLength(file.contents)) return false;
  if (file.readByWorkers && workerOwner && (info.uid !== workerOwner.uid || info.gid !== workerOwner.gid)) return false;
  return readFileSync(path).equals(Buffer.from(file.contents));
}

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
  return listFilesSync(dir);
}

function listFilesSync(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
