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
  await mkdir(outDir, { recursive: true });
  const wanted = new Set(output.files.map((f) => f.path));
  for (const file of output.files) await writeAtomic(join(outDir, file.path), file.contents, file.mode);
  await writeAtomic(join(outDir, mainConfigName), output.nginxConf, 0o644);
  for (const folder of managedFolders) {
    for (const name of await listFiles(join(outDir, folder))) {
      if (!wanted.has(`${folder}/${name}`)) await rm(join(outDir, folder, name), { force: true });
    }
  }
}

export async function writeAtomic(path: string, contents: string, mode: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temp, contents, { mode, flag: 'wx' });
    await chmod(temp, mode);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
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
