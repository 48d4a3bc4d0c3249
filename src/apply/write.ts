import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile, chmod } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { OutputFile } from '../model/nginx.js';

/** Folders under the output directory that hold only what we wrote; stale files in them are removed. */
export const managedFolders = ['tls', 'ca', 'client'] as const;

export const mainConfigName = 'nginx.conf';

export interface OutputSet {
  readonly nginxConf: string;
  readonly files: readonly OutputFile[];
}

/**
 * Writes the config and key material. Every file goes to a temp name in its own folder and is renamed
 * into place, so nginx never reads half a file; key files are created 0600 before any byte is written.
 */
export async function writeOutput(outDir: string, output: OutputSet): Promise<void> {
  for (const file of output.files) {
    // Names are validated upstream; this keeps a mistake there from writing outside the output folder.
    if (!/^(tls|ca|client)\/[a-z0-9._-]+\.(pem|crt)$/.test(file.path) || file.path.includes('..')) {
      throw new Error(`refusing to write key material to unexpected path ${JSON.stringify(file.path)}`);
    }
  }
  await mkdir(outDir, { recursive: true });
  const wanted = new Set(output.files.map((f) => f.path));
  // Thousands of key files written one after another spend most of their time waiting for the
  // file-system thread pool: make each folder once, then keep a few files in flight at a time.
  for (const folder of new Set(output.files.map((f) => dirname(join(outDir, f.path))))) {
    await mkdir(folder, { recursive: true, mode: 0o755 });
  }
  await forEachLimited(output.files, parallelWrites, (file) => replaceFile(join(outDir, file.path), file.contents, file.mode));
  // Last, so that nginx.conf never names a key file that is not in place yet.
  await writeAtomic(join(outDir, mainConfigName), output.nginxConf, 0o644);
  for (const folder of managedFolders) {
    for (const name of await listFiles(join(outDir, folder))) {
      if (!wanted.has(`${folder}/${name}`)) await rm(join(outDir, folder, name), { force: true });
    }
  }
}

async function writeAtomic(path: string, contents: string, mode: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  await replaceFile(path, contents, mode);
}

const parallelWrites = 16;

/** Temp file (created with `mode`, then chmod'ed past the umask) renamed over `path`; the folder must exist. */
async function replaceFile(path: string, contents: string, mode: number): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temp, contents.length > chunkLength ? chunks(contents) : contents, { mode, flag: 'wx' });
    await chmod(temp, mode);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
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
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => e.name).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
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
