import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, buildDiagnostics, newBuildMemo } from '../../src/build/build.js';
import { readInputs } from '../../src/sources/files.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { fixtureCases, fixturesRoot, goldenOptions } from '../support/golden.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * `buildDiagnostics` (the admission webhook's build) stops before the data plane: it must say exactly
 * what `build` says, so no diagnostic may come from the data plane or later. Every fixture, with the
 * controller options of its `args` file (ConfigMaps, TCP/UDP services, default backend, snippets), fresh
 * and on a memo of its own that built another fixture's objects before.
 */

/** The translate options of a golden case's flags that decide what is reported. */
function optionsOf(name: string): TranslateOptions {
  const flags = goldenOptions(name);
  const value = (flag: string) => {
    const at = flags.indexOf(flag);
    return at >= 0 ? flags[at + 1] : undefined;
  };
  const port = (flag: string, fallback: number) => Number(value(flag) ?? fallback);
  const snippetNamespace = value('--snippet-namespace');
  return testTranslateOptions({
    ...(value('--configmap') !== undefined && { configMap: value('--configmap') }),
    ...(value('--tcp-services-configmap') !== undefined && { tcpServicesConfigMap: value('--tcp-services-configmap') }),
    ...(value('--udp-services-configmap') !== undefined && { udpServicesConfigMap: value('--udp-services-configmap') }),
    ...(value('--default-backend-service') !== undefined && { defaultBackendService: value('--default-backend-service') }),
    ...(value('--default-certificate') !== undefined && { defaultCertificate: value('--default-certificate') }),
    ...(flags.includes('--allow-snippet-annotations') && { snippets: { allow: true, ...(snippetNamespace !== undefined && { namespaces: [snippetNamespace] }) } }),
    ...(flags.includes('--upstreams') && { upstreams: value('--upstreams') as 'service' | 'endpoints' }),
    ...(flags.includes('--certificates-per-handshake') && { certificatesPerHandshake: true }),
    httpPort: port('--http-port', 80),
    httpsPort: port('--https-port', 443),
  });
}

describe('buildDiagnostics', () => {
  it('gives the diagnostics of build for every fixture, fresh and on a memo', async () => {
    const memo = newBuildMemo();
    for (const name of fixtureCases) {
      const { snapshot } = await readInputs([join(fixturesRoot, name, 'input')]);
      const options = optionsOf(name);
      const expected = build(snapshot, options).diagnostics;
      expect(buildDiagnostics(snapshot, options).diagnostics, name).toEqual(expected);
      expect(buildDiagnostics(snapshot, options, memo).diagnostics, name).toEqual(expected);
      // And again on the same memo, every part of it reused.
      expect(buildDiagnostics(snapshot, options, memo).diagnostics, name).toEqual(expected);
    }
  });
});
