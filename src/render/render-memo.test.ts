import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Snapshot } from '../sources/snapshot.js';
import { readInputs } from '../sources/files.js';
import type { TranslateOptions } from '../translate/options.js';
import { fixtureCases, fixturesRoot } from '../../test/support/golden.js';
import { configMap } from '../../test/support/gateway.js';
import { testTranslateOptions } from '../../test/support/options.js';
import { build, newBuildMemo, type BuildMemo } from '../build/build.js';
import { readByMainTemplateOnly, templatesDir } from './render.js';

/** Every golden case's input, and variants of its options that change what the bodies read as `@root`. */
async function inputs(): Promise<{ name: string; snapshot: Snapshot; options: TranslateOptions }[]> {
  const all = [];
  for (const name of fixtureCases) {
    const { snapshot } = await readInputs([join(fixturesRoot, name, 'input')]);
    all.push({ name, snapshot, options: testTranslateOptions() });
    all.push({ name: `${name}, request log on`, snapshot, options: testTranslateOptions({ runDir: '/run/other', requestLog: '/run/other/requests.log' }) });
    all.push({ name: `${name}, access log on`, snapshot, options: testTranslateOptions({ accessLog: '/var/log/nginx/access.log' }) });
  }
  return all;
}

describe('the render memo', () => {
  it('gives the bytes a build without it gives, whatever builds came before, in either order', async () => {
    const cases = await inputs();
    const memo: BuildMemo = newBuildMemo();
    for (const round of [cases, [...cases].reverse(), cases]) {
      for (const { name, snapshot, options } of round) {
        expect(build(snapshot, options, memo).files, name).toEqual(build(snapshot, options).files);
      }
    }
  });

  it('renders a host again when only what it reads outside itself changed', async () => {
    const { snapshot } = await readInputs([join(fixturesRoot, 'termination', 'input')]);
    const withHsts = (maxAge: string): Snapshot => ({ objects: [...snapshot.objects, configMap('infra', 'controller', { 'hsts-max-age': maxAge })] });
    const options = testTranslateOptions({ configMap: 'infra/controller' });
    const memo: BuildMemo = newBuildMemo();
    const before = build(withHsts('100'), options, memo).files[0]!.contents;
    expect(before).toContain('max-age=100');
    // The hosts are the same; the header they all send, read from the http settings, is not.
    const after = build(withHsts('200'), options, memo).files[0]!.contents;
    expect(after).not.toContain('max-age=100');
    expect(after).toBe(build(withHsts('200'), options).files[0]!.contents);
  });
});

describe('the parts of the config kept whole from build to build', () => {
  it('writes the shared 404 server again when a passthrough host goes', async () => {
    const { snapshot } = await readInputs([join(fixturesRoot, 'passthrough', 'input')]);
    const options = testTranslateOptions();
    const memo = newBuildMemo();
    expect(build(snapshot, options, memo).files[0]!.contents).toContain('            vault.example.test\n');
    const withoutVault: Snapshot = { objects: snapshot.objects.filter((o) => !(o.kind === 'Ingress' && o.metadata.name === 'vault')) };
    const after = build(withoutVault, options, memo).files[0]!.contents;
    expect(after).not.toContain('            vault.example.test\n');
    expect(after).toBe(build(withoutVault, options).files[0]!.contents);
  });

  it('writes the stream section again when only what it reads besides its routes changed', async () => {
    const { snapshot } = await readInputs([join(fixturesRoot, 'passthrough', 'input')]);
    const memo = newBuildMemo();
    const withResolver = (address: string) => testTranslateOptions({ resolvers: [address] });
    expect(build(snapshot, withResolver('10.0.0.10'), memo).files[0]!.contents).toContain('resolver 10.0.0.10');
    const after = build(snapshot, withResolver('10.0.0.11'), memo).files[0]!.contents;
    expect(after).not.toContain('resolver 10.0.0.10');
    expect(after).toBe(build(snapshot, withResolver('10.0.0.11')).files[0]!.contents);
  });
});

describe('what the render memo leaves out of a body\'s context', () => {
  it('is named by no partial a server body uses', () => {
    const partials = join(templatesDir(), 'partials');
    const source = (name: string) => readFileSync(join(partials, `${name}.hbs`), 'utf8');
    const reached = new Set<string>();
    const visit = (name: string): void => {
      if (reached.has(name)) return;
      reached.add(name);
      for (const [, used] of source(name).matchAll(/\{\{#?>\s*([\w-]+)/g)) visit(used!);
    };
    visit('plainServerBody');
    visit('tlsServerBody');
    visit('virtualHostServers');
    visit('upstreamBlock');
    expect(reached.has('location')).toBe(true);
    const leftOut = [...readByMainTemplateOnly.model, ...readByMainTemplateOnly.http];
    for (const name of reached) {
      for (const key of leftOut) expect(new RegExp(`\\b${key}\\b`).test(source(name)), `${name}.hbs names ${key}`).toBe(false);
    }
  });
});
