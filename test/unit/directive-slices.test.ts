import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../src/build/build.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { annotationCatalog, configMapCatalog } from '../../src/translate/ingress/annotations/catalog.js';
import { directiveSlices, httpDirectiveSlices } from '../../src/translate/ingress/annotations/directive-slices.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { configMap, object, service } from '../support/gateway.js';
import { checkBuiltFiles, requireNginx } from '../support/nginx.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * Every directive slice, held to what a slice promises: its annotation sets the directive in the
 * Ingress's locations, its ConfigMap key in the http block, a value outside the schema reaches nginx
 * from neither, and nginx -t loads what it accepts, whatever the buffers.
 */

/** A value each slice accepts (as rendered) and one it refuses. */
const samples: Readonly<Record<string, { readonly accepted: string; readonly renders: string; readonly refused: string }>> = {
  'proxy-max-temp-file-size': { accepted: '1M', renders: '1m', refused: '512k' },
  'proxy-cookie-domain': { accepted: ' backend.internal  $host', renders: 'backend.internal $host', refused: 'a;b example.com' },
  'proxy-cookie-path': { accepted: '/app/ /', renders: '/app/ /', refused: '/a {' },
  'relative-redirects': { accepted: 'true', renders: 'off', refused: 'maybe' },
};

/** A value each ConfigMap-only slice accepts (as rendered) and one it refuses. */
const httpSamples: Readonly<Record<string, { readonly accepted: string; readonly renders: string; readonly refused: string }>> = {
  'large-client-header-buffers': { accepted: ' 4  16K ', renders: '4 16k', refused: '64 1m' },
  'client-header-buffer-size': { accepted: '2k', renders: '2k', refused: '2m' },
  'client-header-timeout': { accepted: '30', renders: '30s', refused: '30s;' },
  'client-body-timeout': { accepted: '30', renders: '30s', refused: '-1' },
  'keep-alive-requests': { accepted: '500', renders: '500', refused: '1e3' },
  'enable-underscores-in-headers': { accepted: 'true', renders: 'on', refused: 'yes' },
  'ignore-invalid-headers': { accepted: 'false', renders: 'off', refused: 'off;' },
  'upstream-keepalive-requests': { accepted: '10000', renders: '10000', refused: '0' },
  'upstream-keepalive-timeout': { accepted: '30', renders: '30s', refused: '30 s' },
  'upstream-keepalive-time': { accepted: '30m', renders: '30m', refused: '1 h' },
};

const options: TranslateOptions = testTranslateOptions();

function ingress(annotations: Record<string, string>): SourceObject {
  const base = object('networking.k8s.io/v1', 'Ingress', 'web', 'app', {
    spec: {
      ingressClassName: 'nginx',
      rules: [{ host: 'app.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }],
    },
  });
  const prefixed = Object.fromEntries(Object.entries(annotations).map(([key, value]) => [`nginx.ingress.kubernetes.io/${key}`, value]));
  return { ...base, metadata: { ...base.metadata, annotations: prefixed } };
}

function buildOf(annotations: Record<string, string>, data?: Record<string, string>, extra: Partial<TranslateOptions> = {}) {
  const objects = [service('web', 'app', '10.96.0.10', [{ port: 80 }]), ingress(annotations), ...(data ? [configMap('infra', 'controller', data)] : [])];
  return build({ objects }, { ...options, ...(data && { configMap: 'infra/controller' }), ...extra });
}

/** The lines of nginx.conf inside the Ingress's location, and those of the http block before the first server. */
function places(result: ReturnType<typeof buildOf>): { location: string; http: string } {
  const conf = result.files[0]!.contents;
  const http = conf.slice(conf.indexOf('http {'), conf.indexOf('server {', conf.indexOf('http {')));
  const start = conf.indexOf('location / {', conf.indexOf('server_name app.example.test'));
  return { location: conf.slice(start, conf.indexOf('\n        }', start)), http };
}

describe.each(directiveSlices)('directive slice $name', (slice) => {
  const sample = samples[slice.name]!;

  it('has a sample here', () => {
    expect(sample).toBeDefined();
  });

  it('is in the catalog as supported, annotation and ConfigMap key, with ingress-nginx\'s default', () => {
    expect(annotationCatalog.find((entry) => entry.name === slice.name)).toMatchObject({ status: 'supported', defaultValue: `ConfigMap \`${slice.name}\` (${slice.defaultValue})` });
    expect(configMapCatalog.find((entry) => entry.key === slice.name)).toMatchObject({ status: 'supported', defaultValue: slice.defaultValue });
  });

  it('keeps nginx\'s default when neither the annotation nor the ConfigMap sets it', () => {
    expect(buildOf({}).files[0]!.contents).not.toContain(slice.directive);
  });

  it('sets the directive in the locations from the annotation, in the http block from the ConfigMap', () => {
    const fromAnnotation = places(buildOf({ [slice.name]: sample.accepted }));
    expect(fromAnnotation.location).toContain(`${slice.directive} ${sample.renders};`);
    expect(fromAnnotation.http).not.toContain(slice.directive);
    const fromConfigMap = places(buildOf({}, { [slice.name]: sample.accepted }));
    expect(fromConfigMap.http).toContain(`    ${slice.directive} ${sample.renders};`);
    expect(fromConfigMap.location).not.toContain(slice.directive);
  });

  it('refuses a value outside its schema from the annotation and from the ConfigMap, and renders neither', () => {
    const result = buildOf({ [slice.name]: sample.refused }, { [slice.name]: sample.refused });
    expect(result.files[0]!.contents).not.toContain(slice.directive);
    expect(result.diagnostics.filter((d) => d.field?.includes(`nginx.ingress.kubernetes.io/${slice.name}`)).map((d) => d.code)).toEqual(['annotation-invalid']);
    expect(result.diagnostics.filter((d) => d.field?.includes(slice.name) && d.resource?.kind === 'ConfigMap').map((d) => d.code)).toEqual(['configmap-invalid']);
  });

  it.each([
    ['the default buffers', {}],
    ['the largest buffers an Ingress may ask for', { 'proxy-buffer-size': '1m', 'proxy-buffers-number': '8' }],
  ])('loads in nginx with %s', async (_, buffers) => {
    const nginx = requireNginx();
    const runDir = join(tmpdir(), 'i2n-directive-slices-run');
    const result = buildOf({ ...buffers, [slice.name]: sample.accepted }, { [slice.name]: sample.accepted }, {
      runDir,
      ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }),
    });
    expect(await checkBuiltFiles(result.files, runDir)).toMatchObject({ ok: true });
  });
});

describe.each(httpDirectiveSlices)('ConfigMap-only slice $name', (slice) => {
  const sample = httpSamples[slice.name]!;
  const block = (conf: string) =>
    slice.context === 'http' ? conf.slice(conf.indexOf('http {'), conf.indexOf('server {', conf.indexOf('http {'))) : conf.slice(conf.search(/upstream \S+ \{/), conf.indexOf('}', conf.search(/upstream \S+ \{/)));

  it('has a sample here, and is in the catalog', () => {
    expect(sample).toBeDefined();
    expect(configMapCatalog.find((entry) => entry.key === slice.name)).toMatchObject({ status: slice.status ?? 'supported', defaultValue: slice.defaultValue });
  });

  it('keeps nginx\'s default unless the ConfigMap sets it, then sets it in its block; refuses a value outside its schema', () => {
    expect(buildOf({}, {}).files[0]!.contents).not.toContain(`${slice.directive} ${sample.renders};`);
    expect(block(buildOf({}, { [slice.name]: sample.accepted }).files[0]!.contents)).toContain(`${slice.directive} ${sample.renders};`);
    const refused = buildOf({}, { [slice.name]: sample.refused });
    expect(refused.files[0]!.contents).not.toContain(`${slice.directive} ${sample.renders};`);
    expect(refused.diagnostics.filter((d) => d.field?.includes(slice.name)).map((d) => d.code)).toEqual(['configmap-invalid']);
  });

  it('loads in nginx', async () => {
    const nginx = requireNginx();
    const runDir = join(tmpdir(), 'i2n-directive-slices-run');
    const result = buildOf({}, { [slice.name]: sample.accepted }, { runDir, ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }) });
    expect(await checkBuiltFiles(result.files, runDir)).toMatchObject({ ok: true });
  });
});
