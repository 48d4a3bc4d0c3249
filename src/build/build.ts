/**
 * The one build step, the whole pipeline and nothing else: snapshot + options → translate → render →
 * files, model, diagnostics and statuses (`build`); with nginx -t and the quarantine of what nginx
 * rejects (staged-build.ts, quarantine.ts). Every front end (CLI, bench, cluster mode, reports) calls it;
 * it imports translate/, render/ and apply/, and nothing imports it back but those front ends.
 */
import { createHash } from 'node:crypto';
import type { Diagnostic } from '../model/diagnostics.js';
import { generationPlaceholder, mainConfigName, type NginxConfig } from '../model/nginx.js';
import type { OutputFile } from '../model/files.js';
import type { Snapshot } from '../sources/snapshot.js';
import type { ResourceStatus } from '../model/status.js';
import type { TranslateOptions } from '../translate/options.js';
import { newTranslateMemo, translate, translateDiagnostics, type TranslateMemo, type TranslateResult } from '../translate/translate.js';
import { render, RenderMemo } from '../render/render.js';

export interface BuildResult {
  /** `nginx.conf` first, then the key material, each with its path relative to the output folder. */
  readonly files: readonly OutputFile[];
  /** Digest of all of `files`; the rendered config serves it on its control socket. */
  readonly generation: string;
  readonly model: NginxConfig;
  readonly diagnostics: readonly Diagnostic[];
  /** Gateway API status of every Gateway, TLSRoute and BackendTLSPolicy that is ours. */
  readonly statuses: readonly ResourceStatus[];
  readonly ingresses: TranslateResult['ingresses'];
  readonly certificates: TranslateResult['certificates'];
  readonly references: TranslateResult['references'];
}

/** What a build may reuse from the builds before it: the same result, sooner. */
export interface BuildMemo {
  readonly translate: TranslateMemo;
  readonly render: RenderMemo;
  readonly fileDigests: FileDigestInputs;
}

export function newBuildMemo(): BuildMemo {
  return { translate: newTranslateMemo(), render: new RenderMemo(), fileDigests: new FileDigestInputs() };
}

/**
 * What the generation digest reads of each output file, encoded once while the file stays the same: at
 * 10,000 hosts the key files are 8 MB, and encoding them again for every build (the string made of each
 * file, then its UTF-8 bytes) was 30 ms of a one-Ingress rebuild. The bytes hashed are the same.
 */
export class FileDigestInputs {
  private last = new Map<string, { readonly file: OutputFile; readonly bytes: Buffer }>();

  bytesOf(files: readonly OutputFile[]): Buffer[] {
    const next = new Map<string, { readonly file: OutputFile; readonly bytes: Buffer }>();
    const bytes = files.map((file) => {
      const earlier = this.last.get(file.path);
      const entry = earlier && earlier.file.mode === file.mode && earlier.file.contents === file.contents ? earlier : { file, bytes: digestInput(file) };
      next.set(file.path, entry);
      return entry.bytes;
    });
    this.last = next;
    return bytes;
  }
}

function digestInput(file: OutputFile): Buffer {
  return Buffer.from(`\0${file.path}\0${file.mode}\0${file.contents}`);
}

/**
 * The one build step: snapshot + options → files, model, diagnostics, statuses. Every front end (CLI
 * commands, bench, cluster mode, reports) calls this; none assembles translate and render itself. The
 * cluster mode, which builds again for every change, passes the same memo to each build.
 */
export function build(snapshot: Snapshot, options: TranslateOptions, memo?: BuildMemo): BuildResult {
  const translated = translate(snapshot, options, memo?.translate);
  const { pieces } = render(translated.model, memo?.render);
  // The digest of the config with its placeholder, then of the key files: hashed piece by piece, as one.
  const digest = createHash('sha256');
  for (const piece of pieces) digest.update(piece);
  for (const bytes of memo ? memo.fileDigests.bytesOf(translated.model.files) : translated.model.files.map(digestInput)) digest.update(bytes);
  const generation = digest.digest('hex').slice(0, 32);
  const nginxConf = pieces.map((piece) => (piece === generationPlaceholder ? generation : piece)).join('');
  return {
    files: [{ path: mainConfigName, contents: nginxConf, mode: 0o644 }, ...translated.model.files],
    generation,
    model: { ...translated.model, generation },
    diagnostics: translated.diagnostics,
    statuses: translated.statuses,
    ingresses: translated.ingresses,
    certificates: translated.certificates,
    references: translated.references,
  };
}

/**
 * What `build` says about the resources, without the data plane or rendering: its diagnostics, which
 * come from translate's stages before the data plane (translateDiagnostics). The admission webhook uses
 * it when nginx does not check the candidate: at 10,000 hosts the rest is much of a one-object rebuild
 * and says nothing more about the object.
 */
export function buildDiagnostics(snapshot: Snapshot, options: TranslateOptions, memo?: BuildMemo): Pick<BuildResult, 'diagnostics'> {
  return { diagnostics: translateDiagnostics(snapshot, options, memo?.translate) };
}
