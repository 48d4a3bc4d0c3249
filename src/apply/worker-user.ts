import { readFile } from 'node:fs/promises';
import { execa } from 'execa';
import { EnvironmentError } from './environment.js';

/** A user and group id to give files to. */
export interface FileOwner {
  readonly uid: number;
  readonly gid: number;
}

/**
 * Who must be able to read the files nginx's worker processes open at request time
 * (`auth_basic_user_file`, and the certificate key files with `--certificates-per-handshake`): they are
 * written 0600, so when we write as root they are given to the
 * user the workers run as. The rendered config has no `user` directive, so that is nginx's built-in
 * default: `--user=` (and `--group=`) in `nginx -V`, else `nobody`. Not root: undefined, the files stay
 * ours (an nginx that runs as someone else could not have read our 0600 key files anyway).
 */
export async function workerOwner(nginxBin: string, files: { passwd: string; group: string } = systemFiles): Promise<FileOwner | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const result = await execa(nginxBin, ['-V'], { reject: false, all: true, stdin: 'ignore' });
  const configure = /configure arguments: (.*)/.exec(result.all ?? '')?.[1] ?? '';
  const user = /--user=(\S+)/.exec(configure)?.[1] ?? 'nobody';
  const group = /--group=(\S+)/.exec(configure)?.[1];
  const entry = (await readFile(files.passwd, 'utf8').catch(() => ''))
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === user);
  if (!entry || entry[2] === undefined || entry[3] === undefined) {
    throw new EnvironmentError(`nginx's workers run as user "${user}", which is not in ${files.passwd}; it must be able to read the files the workers open (basic-auth files, key files read per handshake)`);
  }
  let gid = Number(entry[3]);
  if (group !== undefined) {
    const groupEntry = (await readFile(files.group, 'utf8').catch(() => ''))
      .split('\n')
      .map((line) => line.split(':'))
      .find((fields) => fields[0] === group);
    if (groupEntry?.[2] !== undefined) gid = Number(groupEntry[2]);
  }
  return { uid: Number(entry[2]), gid };
}

const systemFiles = { passwd: '/etc/passwd', group: '/etc/group' };
