import { defaults, toTranslateOptions, type CommonFlags } from '../src/cli/options.js';
import type { TranslateOptions } from '../src/translate/options.js';

/** What `ingress2nginx render -f DIR -o OUT` (and `validate -f DIR`) gets from commander: every flag at its default. */
export function defaultRenderOptions(inputDir: string): TranslateOptions {
  const flags: CommonFlags = {
    ...defaults,
    filename: [inputDir],
    format: 'text',
    strict: false,
    quiet: false,
    allowEmpty: false,
    watchIngressWithoutClass: false,
    allowCrossNamespaceSecrets: false,
    disableSvcExternalName: false,
    firstNamespaceOwnsHost: false,
    allowSnippetAnnotations: false,
    upstreams: 'service',
    accessLog: 'off',
    certificatesPerHandshake: false,
  };
  return toTranslateOptions(flags, { nginxVersion: defaults.nginxVersion, streamModulePath: defaults.streamModule }, new Date());
}
