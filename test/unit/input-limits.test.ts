import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

/**
 * Hostile YAML through the real CLI entry: a document nested deeper than any parser's stack, or one whose
 * aliases stand for far more than its text. Each must be an input error on that document (exit 1), while
 * the valid Ingress beside it is still rendered; never an internal error (exit 2).
 */

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'i2n-limits-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const service = `apiVersion: v1
kind: Service
metadata: {name: app, namespace: web}
spec: {clusterIP: 10.0.0.10, ports: [{port: 80}]}
`;

const validIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: valid, namespace: web}
spec:
  ingressClassName: nginx
  rules:
    - host: valid.example.test
      http:
        paths: [{path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}]
`;

/** An Ingress with a bad annotation (a diagnostic with a field path, as refinePositions looks up) and `deep` under spec. */
const deepIngress = (deep: string): string => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: deep
  namespace: web
  annotations:
    nginx.ingress.kubernetes.io/backend-protocol: NOPE
spec:
  ingressClassName: nginx
  rules:
    - host: deep.example.test
      http:
        paths: [{path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}]
  extra:${deep}
`;

const flow = (depth: number): string => ` ${'['.repeat(depth)}${']'.repeat(depth)}`;
/** Block style, one more space of indentation per level. */
const indentedBlock = (depth: number): string =>
  Array.from({ length: depth }, (_, level) => `\n${' '.repeat(4 + level)}-`).join('') + ' leaf';
/** Block style on one line: `- - - … leaf`, each `- ` a sequence inside the previous one. */
const compactBlock = (depth: number): string => `\n    ${'- '.repeat(depth)}leaf`;

async function render(manifests: string): Promise<{ exitCode: number; stderr: string; conf: string }> {
  const input = join(dir, 'input.yaml');
  await writeFile(input, [service, validIngress, manifests].join('---\n'));
  const output = join(dir, 'out');
  const { exitCode, stderr } = await runCli(['render', '-f', input, '-o', output]);
  const conf = await readFile(join(output, 'nginx.conf'), 'utf8').catch(() => '');
  return { exitCode, stderr, conf };
}

describe('deep nesting', () => {
  it.each([
    ['flow, 1,000 deep', flow(1000)],
    ['flow, 100,000 deep', flow(100_000)],
    ['block, 1,000 deep', indentedBlock(1000)],
    ['block, 100,000 deep', compactBlock(100_000)],
  ])('is an input error on its document, not a crash: %s', async (_, deep) => {
    const { exitCode, stderr, conf } = await render(deepIngress(deep));
    expect(stderr).not.toMatch(/internal error/);
    expect(stderr).toMatch(/^\S+input\.yaml:\d+:\d+: error \[yaml-too-deep\]: the document is nested more than 256 levels deep; .*; the document is skipped$/m);
    expect(exitCode).toBe(1);
    expect(conf).toContain('server_name valid.example.test;');
    expect(conf).not.toContain('deep.example.test');
  });

  it('renders an Ingress nested just within the limit and places its diagnostic on its line', async () => {
    const { exitCode, stderr, conf } = await render(deepIngress(flow(240)));
    expect(stderr).toMatch(/input\.yaml:\d+:5: error \[annotation-invalid\] Ingress web\/deep/);
    expect(exitCode).toBe(1);
    expect(conf).toContain('valid.example.test');
  });
});

describe('alias bombs', () => {
  it('refuses a 2 KB document whose aliases stand for 22,500 paths, and renders the rest', async () => {
    // 150 aliases of a rule that holds 150 aliases of a path. Without the limit this one takes seconds and
    // hundreds of MB; a 14 KB one (1,000 × 1,000) runs for minutes and gigabytes.
    const path = '{path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}';
    const aliases = (name: string): string => `[${Array.from({ length: 150 }, () => name).join(', ')}]`;
    const bomb = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: lol, namespace: web}
x-definitions:
  - &path ${path}
  - &rule {host: lol.example.test, http: {paths: ${aliases('*path')}}}
spec:
  ingressClassName: nginx
  rules: ${aliases('*rule')}
`;
    expect(bomb.length).toBeLessThan(2500);
    const { exitCode, stderr, conf } = await render(bomb);
    expect(stderr).toMatch(/input\.yaml:\d+: error \[yaml-alias-limit\]: the document's aliases expand it by more than 500,000 characters/);
    expect(exitCode).toBe(1);
    expect(conf).toContain('server_name valid.example.test;');
    expect(conf).not.toContain('lol.example.test');
  });
});
