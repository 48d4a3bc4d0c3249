import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn, setTimeout as delay } from 'node:timers/promises';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutputFile } from '../model/files.js';
import { EnvironmentError } from './environment.js';
import { OutputFolder, writeOutput } from './write.js';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'ingress2nginx-write-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let dirs = 0;
async function freshDir(): Promise<string> {
  const dir = join(scratch, String(++dirs));
  await mkdir(dir);
  return dir;
}

const lockName = '.ingress2nginx.lock';

async function deadPid(): Promise<number> {
  const child = execa('true');
  const pid = child.pid as number;
  await child;
  return pid;
}

function files(tag: string, keys: readonly string[]): OutputFile[] {
  return [
    { path: 'nginx.conf', contents: `# ${tag}\n${keys.map((k) => `ssl_certificate tls/${k}.pem;\n`).join('')}`, mode: 0o644 },
    ...keys.map((k) => ({ path: `tls/${k}.pem`, contents: `key ${k}\n`, mode: 0o600 })),
  ];
}

/** A fresh folder with only `output` written into it, to compare with. */
async function writtenAlone(output: readonly OutputFile[]): Promise<string> {
  const dir = await freshDir();
  await writeOutput(dir, output);
  return dir;
}

/** Every file under `dir` but our own dot-folders, with its bytes and mode. */
async function snapshotOf(dir: string): Promise<Record<string, string>> {
  const entries: Record<string, string> = {};
  for (const name of ['nginx.conf', ...(await readdir(join(dir, 'tls')).catch(() => [])).map((f) => `tls/${f}`)]) {
    const path = join(dir, name);
    if (!existsSync(path)) continue;
    entries[name] = `${((await stat(path)).mode & 0o777).toString(8)} ${await readFile(path, 'utf8')}`;
  }
  return entries;
}

describe('OutputFolder lock', () => {
  it('lets one opener in at a time, also when several find a stale lock at once', async () => {
    for (let round = 0; round < 6; round++) {
      const dir = await freshDir();
      await writeFile(join(dir, lockName), `${await deadPid()}@${hostname()}\n`);
      let inside = 0;
      let most = 0;
      await Promise.all(
        Array.from({ length: 12 }, async (_, index) => {
          // Staggered by a few event-loop turns, so that some find the stale lock while others take it over.
          for (let turn = 0; turn < index * 3; turn++) await nextTurn();
          const folder = await OutputFolder.open(dir, { lockTimeoutMs: 30_000 });
          inside++;
          most = Math.max(most, inside);
          // Give any other opener the chance to get in while this one holds the lock.
          await delay(5);
          inside--;
          await folder.close();
        }),
      );
      expect(most).toBe(1);
      expect(await readdir(dir)).toEqual([]);
    }
  });

  it('takes over a lock naming this very process that it does not hold: a restarted container is pid 1 again', async () => {
    const dir = await freshDir();
    await writeFile(join(dir, lockName), `${process.pid}@${hostname()}\n`);
    const folder = await OutputFolder.open(dir, { lockTimeoutMs: 2000 });
    await folder.close();
    expect(await readdir(dir)).toEqual([]);
  });

  it('gives up on a live holder after the timeout, naming the holder and the lock file', async () => {
    const dir = await freshDir();
    const holder = await OutputFolder.open(dir);
    try {
      const waiting = OutputFolder.open(dir, { lockTimeoutMs: 300 });
      await expect(waiting).rejects.toThrow(EnvironmentError);
      await expect(waiting).rejects.toThrow(
        `the output folder ${dir} is locked by another ingress2nginx (${process.pid}@${hostname()}); if none is running, remove ${join(dir, lockName)}`,
      );
    } finally {
      await holder.close();
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it('close leaves a lock alone that is no longer its own', async () => {
    const dir = await freshDir();
    const folder = await OutputFolder.open(dir);
    const other = `${await deadPid()}@elsewhere\n`;
    await writeFile(join(dir, lockName), other);
    await folder.close();
    expect(await readFile(join(dir, lockName), 'utf8')).toBe(other);
  });

  it('removes the lock candidates and breaker files of dead processes, and keeps those of live ones', async () => {
    const dir = await freshDir();
    const dead = `${await deadPid()}@${hostname()}\n`;
    await writeFile(join(dir, `${lockName}.123.0a0b0c0d`), dead);
    await writeFile(join(dir, `${lockName}.break`), dead);
    await writeFile(join(dir, `${lockName}.${process.pid}.01020304`), `${process.pid}@${hostname()}\n`);
    const folder = await OutputFolder.open(dir);
    await folder.close();
    expect(await readdir(dir)).toEqual([`${lockName}.${process.pid}.01020304`]);
  });
});

describe('OutputFolder commit', () => {
  it('keeps what it replaces and removes when asked, and restores the folder to exactly that', async () => {
    const dir = await freshDir();
    await writeOutput(dir, files('one', ['a', 'b']));
    const before = await snapshotOf(dir);
    const folder = await OutputFolder.open(dir);
    try {
      const changed = files('two', ['a', 'c']);
      changed[1] = { ...changed[1]!, contents: 'key a, rotated\n' };
      const commit = await folder.commit(await folder.stage(changed), { keepPrevious: true });
      expect(commit.written).toEqual(['tls/a.pem', 'tls/c.pem', 'nginx.conf']);
      expect(commit.removed).toEqual(['tls/b.pem']);
      expect(await snapshotOf(dir)).not.toEqual(before);
      await folder.restorePrevious(commit);
      expect(await snapshotOf(dir)).toEqual(before);

      const kept = await folder.commit(await folder.stage(changed), { keepPrevious: true });
      await folder.dropPrevious(kept);
      expect((await readdir(dir)).filter((name) => name.startsWith('.i2n'))).toEqual([]);
      expect(await readFile(join(dir, 'tls', 'a.pem'), 'utf8')).toBe('key a, rotated\n');
    } finally {
      await folder.close();
    }
  });


  it('moves key files before nginx.conf, rewrites nothing unchanged and removes stale key files', async () => {
    const dir = await freshDir();
    expect(await writeOutput(dir, files('one', ['a', 'b', 'c']))).toEqual({
      written: ['tls/a.pem', 'tls/b.pem', 'tls/c.pem', 'nginx.conf'],
      removed: [],
    });
    const inode = (await stat(join(dir, 'tls', 'a.pem'))).ino;

    expect(await writeOutput(dir, files('one', ['a', 'b', 'c']))).toEqual({ written: [], removed: [] });
    expect(await writeOutput(dir, files('two', ['a', 'd']))).toEqual({ written: ['tls/d.pem', 'nginx.conf'], removed: ['tls/b.pem', 'tls/c.pem'] });
    expect((await stat(join(dir, 'tls', 'a.pem'))).ino).toBe(inode);
    expect((await readdir(join(dir, 'tls'))).sort()).toEqual(['a.pem', 'd.pem']);
    expect(await readdir(dir)).toEqual(expect.arrayContaining(['nginx.conf', 'tls']));
    expect((await readdir(dir)).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('stages a file already in place as a link to it, and writes the rest; a rejected set keeps its links after a commit', async () => {
    const dir = await freshDir();
    await writeOutput(dir, files('one', ['a', 'b']));
    const live = (path: string) => stat(join(dir, path));
    const folder = await OutputFolder.open(dir);
    try {
      const next = files('two', ['a', 'b']);
      next[2] = { ...next[2]!, contents: 'key b, rotated\n' };
      const staged = await folder.stage(next);
      expect([...staged.unchanged]).toEqual(['tls/a.pem']);
      const inStaging = (path: string) => stat(join(staged.dir, path));
      expect((await inStaging('tls/a.pem')).ino).toBe((await live('tls/a.pem')).ino);
      expect((await inStaging('tls/b.pem')).ino).not.toBe((await live('tls/b.pem')).ino);
      expect((await inStaging('nginx.conf')).ino).not.toBe((await live('nginx.conf')).ino);
      // Same bytes, another mode: written, so that the commit puts the mode back.
      const opened = await folder.stage([{ ...next[1]!, mode: 0o644 }]);
      expect(opened.unchanged.size).toBe(0);
      await folder.discard(opened);

      const rejected = await folder.keepRejected(await folder.stage(files('rejected', ['a'])));
      expect((await folder.commit(staged)).written).toEqual(['tls/b.pem', 'nginx.conf']);
      expect(await readFile(join(dir, 'tls', 'b.pem'), 'utf8')).toBe('key b, rotated\n');
      expect(await readFile(join(dir, 'tls', 'a.pem'), 'utf8')).toBe('key a\n');
      expect(existsSync(rejected)).toBe(false);
    } finally {
      await folder.close();
    }
    expect((await readdir(dir)).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('a set staged before another commit still puts its own bytes in place', async () => {
    const dir = await freshDir();
    await writeOutput(dir, files('one', ['a']));
    const folder = await OutputFolder.open(dir);
    try {
      const first = await folder.stage(files('one', ['a']));
      expect([...first.unchanged].sort()).toEqual(['nginx.conf', 'tls/a.pem']);
      const rotated = files('two', ['a']);
      rotated[1] = { ...rotated[1]!, contents: 'key a, rotated\n' };
      await folder.commit(await folder.stage(rotated));
      expect((await folder.commit(first)).written).toEqual(['tls/a.pem', 'nginx.conf']);
      expect(await readFile(join(dir, 'tls', 'a.pem'), 'utf8')).toBe('key a\n');
      expect(await readFile(join(dir, 'nginx.conf'), 'utf8')).toContain('# one');
    } finally {
      await folder.close();
    }
  });

  it('a partial staging holds only what changed; its commit puts exactly that in place, also after another commit came between', async () => {
    const dir = await freshDir();
    await writeOutput(dir, files('one', ['a', 'b']));
    const folder = await OutputFolder.open(dir);
    try {
      const next = files('two', ['a', 'b']);
      const partial = await folder.stage(next, { complete: false });
      expect((await readdir(partial.dir)).sort()).toEqual(['nginx.conf']);
      expect((await folder.commit(partial)).written).toEqual(['nginx.conf']);
      expect(await snapshotOf(dir)).toEqual(await snapshotOf(await writtenAlone(next)));

      // Staged while a.pem was in place; another commit then rotates it: the partial set puts its own a.pem back.
      const again = await folder.stage(files('three', ['a', 'b']), { complete: false });
      const rotated = files('two', ['a', 'b']);
      rotated[1] = { ...rotated[1]!, contents: 'key a, rotated\n' };
      await folder.commit(await folder.stage(rotated));
      expect((await folder.commit(again)).written).toEqual(['tls/a.pem', 'nginx.conf']);
      expect(await readFile(join(dir, 'tls', 'a.pem'), 'utf8')).toBe('key a\n');
    } finally {
      await folder.close();
    }
  });

  it('a staged set that is discarded changes nothing; one that is kept becomes .i2n-rejected', async () => {
    const dir = await freshDir();
    await writeOutput(dir, files('good', ['a']));
    const folder = await OutputFolder.open(dir);
    try {
      await folder.discard(await folder.stage(files('discarded', ['x'])));
      const kept = await folder.keepRejected(await folder.stage(files('rejected', ['y'])));
      expect(kept).toBe(join(dir, '.i2n-rejected'));
      // Staged but never committed: close removes it.
      await folder.stage(files('abandoned', ['z']));
    } finally {
      await folder.close();
    }
    expect((await readdir(dir)).sort()).toEqual(['.i2n-rejected', 'auth', 'ca', 'client', 'nginx.conf', 'tls']);
    expect(await readFile(join(dir, 'nginx.conf'), 'utf8')).toContain('# good');
    expect(await readFile(join(dir, '.i2n-rejected', 'tls', 'y.pem'), 'utf8')).toBe('key y\n');
    expect(existsSync(join(dir, 'tls', 'x.pem'))).toBe(false);
  });

  it('refuses a key file path outside the managed folders before writing anything', async () => {
    const dir = await freshDir();
    const folder = await OutputFolder.open(dir);
    try {
      await expect(folder.stage([...files('x', ['a']), { path: '../escape.pem', contents: 'x', mode: 0o600 }])).rejects.toThrow(
        'refusing to write key material to unexpected path "../escape.pem"',
      );
    } finally {
      await folder.close();
    }
    expect(await readdir(dir)).toEqual([]);
  });
});
