import { createHash } from 'node:crypto';
import type { Diagnostic } from '../model/diagnostics.js';
import { generationPlaceholder, mainConfigName, type NginxConfig } from '../model/nginx.js';
import type { OutputFile } from '../model/files.js';
import type { Snapshot } from '../sources/snapshot.js';
import type { ResourceStatus } from '../model/status.js';
import type { TranslateOptions } from '../translate/options.js';
import { newTranslateMemo, translate, type TranslateMemo, type TranslateResult } from '../translate/translate.js';
import { render, RenderMemo } from './render.js';

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
}

export function newBuildMemo(): BuildMemo {
  return { translate: newTranslateMemo(), render: new RenderMemo() };
}

/**
 * The one build step: snapshot + options → files, model, diagnostics, statuses. Every front end (CLI
 * commands, bench, cluster mode, reports) calls this; none assembles translate and render itself. The
 * cluster mode, which builds again for every change, passes the same memo to each build.
 */
export function build(snapshot: Snapshot, options: TranslateOptions, memo?: BuildMemo): BuildResult {
  const translated = translate(snapshot, options, memo?.translate);
  const { nginxConf } = render(translated.model, memo?.render);
  const digest = createHash('sha256').update(nginxConf);
  for (const file of translated.model.files) digest.update(`\0${file.path}\0${file.mode}\0${file.contents}`);
  const generation = digest.digest('hex').slice(0, 32);
  return {
    files: [{ path: mainConfigName, contents: nginxConf.replace(generationPlaceholder, generation), mode: 0o644 }, ...translated.model.files],
    generation,
    model: { ...translated.model, generation },
    diagnostics: translated.diagnostics,
    statuses: translated.statuses,
    ingresses: translated.ingresses,
    certificates: translated.certificates,
    references: translated.references,
  };
}
