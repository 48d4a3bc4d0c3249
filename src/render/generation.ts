import { createHash } from 'node:crypto';
import type { OutputFile } from '../model/files.js';

/**
 * The config's generation: a digest of `nginx.conf` and of every key file's path, mode and the digest
 * of its contents. Through each file's own digest, so that a build can take that of a file it wrote
 * before (`FileDigests`) instead of reading megabytes of unchanged key material again.
 */
export function generationOf(nginxConf: string, files: readonly OutputFile[], digestOf: (file: OutputFile) => string = contentsDigest): string {
  const digest = createHash('sha256').update(nginxConf);
  for (const file of files) digest.update(`\0${file.path}\0${file.mode}\0${digestOf(file)}`);
  return digest.digest('hex').slice(0, 32);
}

function contentsDigest(file: OutputFile): string {
  return createHash('sha256').update(file.contents).digest('hex');
}

/**
 * The contents digest of each file of the last build by path, with the contents it was made of: a file
 * whose contents are the same string keeps its digest (`===` on a string that did not change is quick,
 * and a copy of it is compared without a digest). The cluster mode keeps one across builds (build.ts
 * `BuildMemo`); files that are gone are dropped at each build.
 */
export class FileDigests {
  private last = new Map<string, { readonly contents: string; readonly digest: string }>();

  /** `digestOf` for one build's files, the build's files being the memo after it. */
  begin(): (file: OutputFile) => string {
    const earlier = this.last;
    const next = new Map<string, { readonly contents: string; readonly digest: string }>();
    this.last = next;
    return (file) => {
      const before = earlier.get(file.path);
      const digest = before !== undefined && before.contents === file.contents ? before.digest : contentsDigest(file);
      next.set(file.path, { contents: file.contents, digest });
      return digest;
    };
  }
}
