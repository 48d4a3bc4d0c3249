import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutputFolder } from './write.js';
import { workerOwner } from './worker-user.js';

/** Runs as root in CI and here: the branch that gives files away is the one under test. */
const root = process.getuid?.() === 0;

let scratch: string;
let files: { passwd: string; group: string };
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'ingress2nginx-worker-'));
  files = { passwd: join(scratch, 'passwd'), group: join(scratch, 'group') };
  await writeFile(files.passwd, 'root:x:0:0::/root:/bin/sh\nnobody:x:65534:65534::/:/usr/sbin/nologin\nnginx:x:101:102::/:/bin/false\n');
  await writeFile(files.group, 'root:x:0:\nnogroup:x:65534:\nweb:x:4000:\n');
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A stand-in nginx whose `-V` reports these configure arguments. */
async function fakeNginx(configure: string): Promise<string> {
  const binary = join(scratch, `nginx-${Math.abs(hashCode(configure))}`);
  await writeFile(binary, `#!/bin/sh\necho "nginx version: nginx/1.28.0" >&2\necho "configure arguments: ${configure}" >&2\n`);
  await chmod(binary, 0o755);
  return binary;
}

function hashCode(text: string): number {
  return [...text].reduce((hash, character) => (hash * 31 + character.charCodeAt(0)) | 0, 0);
}

describe.runIf(root)('workerOwner (as root)', () => {
  it("is nginx's built-in worker user: --user and --group of nginx -V", async () => {
    expect(await workerOwner(await fakeNginx('--prefix=/etc/nginx --user=nginx --group=web'), files)).toEqual({ uid: 101, gid: 4000 });
  });

  it('is nobody (with its own group) without --user, and when nginx cannot be run', async () => {
    expect(await workerOwner(await fakeNginx('--prefix=/usr/share/nginx'), files)).toEqual({ uid: 65534, gid: 65534 });
    expect(await workerOwner(join(scratch, 'no-such-nginx'), files)).toEqual({ uid: 65534, gid: 65534 });
  });

  it('is an environment error when that user does not exist', async () => {
    await expect(workerOwner(await fakeNginx('--user=www-data'), files)).rejects.toThrow(/"www-data", which is not in/);
  });

  it('gives the files the workers read to that user, and rewrites them when their owner is wrong', async () => {
    const dir = join(scratch, 'out');
    const owner = { uid: 65534, gid: 65534 };
    const folder = await OutputFolder.open(dir, { workerOwner: owner });
    try {
      const output = [
        { path: 'nginx.conf', contents: 'auth_basic_user_file auth/web_users.htpasswd;\n', mode: 0o644 },
        { path: 'auth/web_users.htpasswd', contents: 'alice:{PLAIN}x\n', mode: 0o600, readByWorkers: true },
        { path: 'tls/web_site.pem', contents: 'key\n', mode: 0o600 },
      ];
      await folder.commit(await folder.stage(output));
      const htpasswd = await stat(join(dir, 'auth/web_users.htpasswd'));
      expect([htpasswd.uid, htpasswd.gid, htpasswd.mode & 0o777]).toEqual([65534, 65534, 0o600]);
      expect((await stat(join(dir, 'tls/web_site.pem'))).uid).toBe(0);
      const again = await folder.commit(await folder.stage(output));
      expect(again.written).toEqual([]);
    } finally {
      await folder.close();
    }
    // nginx now runs its workers as another user: the file is given to it, though its bytes are the same.
    const moved = await OutputFolder.open(dir, { workerOwner: { uid: 101, gid: 102 } });
    try {
      const output = [
        { path: 'nginx.conf', contents: 'auth_basic_user_file auth/web_users.htpasswd;\n', mode: 0o644 },
        { path: 'auth/web_users.htpasswd', contents: 'alice:{PLAIN}x\n', mode: 0o600, readByWorkers: true },
        { path: 'tls/web_site.pem', contents: 'key\n', mode: 0o600 },
      ];
      expect((await moved.commit(await moved.stage(output))).written).toEqual(['auth/web_users.htpasswd']);
      expect((await stat(join(dir, 'auth/web_users.htpasswd'))).uid).toBe(101);
    } finally {
      await moved.close();
    }
  });
});
