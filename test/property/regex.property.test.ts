import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSafeRegex, parseSafeRegex, pathRegexAlphabet, textRegexAlphabet, type RegexAlphabet } from '../../src/translate/checks/safe-regex.js';
import { freePorts } from '../support/ports.js';
import { createNginxPrefix, nginxTest, prefixDirectives, requireNginx, startNginx, stopAllNginx } from '../support/nginx.js';
import { adversarialSubject, choices, compileProgram, countSteps } from '../support/regex-work.js';

/**
 * Every regex the safe grammar accepts (safe-regex.ts, regex-cost.ts) is one nginx compiles, and one
 * whose matching is linear in the subject, on random regexes built from the grammar's pieces with the
 * costly shapes among them:
 * - work, counted: a plain backtracking matcher (test/support/regex-work.ts, PCRE without its
 *   optimisations) runs each accepted regex on 4 KB subjects made to keep it busy, and must finish within
 *   8 steps per subject byte per instruction of the regex's program;
 * - real nginx: the accepted regexes of a case are locations and map keys of one config that `nginx -t`
 *   must accept, and a running nginx matches each against a 4 KB subject under PCRE's own work limit
 *   (`(*LIMIT_MATCH=…)`, 16 backtracking steps per subject byte): a regex past it answers 500.
 * Work is counted in steps, never timed. `I2N_PROPERTY_RUNS` sets the number of cases.
 */

const runs = Number(process.env.I2N_PROPERTY_RUNS ?? 40);
const subjectLength = 4096;
const stepsPerByteAndInstruction = 8;
const pcreStepsPerByte = 16;

/** A piece of a regex: atoms of the grammar, with quantifiers of every kind, small counts mostly. */
const regexSource = (literals: readonly string[]): fc.Arbitrary<string> => {
  const { tree } = fc.letrec<{ tree: string; atom: string; piece: string; sequence: string }>((tie) => ({
    atom: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...literals) },
      { weight: 3, arbitrary: fc.constantFrom('.', '[a-z]', '[^/]', '[ab]', '\\d', '\\w', '[0-9a-f]', '[^a]', '\\s') },
      { weight: 2, arbitrary: tie('tree').map((inner) => `(${inner})`) },
      { weight: 1, arbitrary: tie('tree').map((inner) => `(?:${inner})`) },
    ),
    piece: fc
      .tuple(
        tie('atom'),
        fc.oneof(
          { weight: 8, arbitrary: fc.constant('') },
          { weight: 2, arbitrary: fc.constantFrom('*', '+', '?', '*?', '+?') },
          { weight: 2, arbitrary: fc.constantFrom('{2}', '{1,3}', '{0,4}', '{2,}', '{12}', '{3,8}?') },
          { weight: 1, arbitrary: fc.constantFrom('{100}', '{1,999}', '{999}') },
        ),
      )
      .map(([atom, quantifier]) => atom + quantifier),
    sequence: fc.array(tie('piece'), { minLength: 1, maxLength: 5 }).map((pieces) => pieces.join('')),
    tree: fc.array(tie('sequence'), { minLength: 1, maxLength: 3 }).map((branches) => branches.join('|')),
  }));
  return tree;
};

const pathRegex = fc
  .tuple(regexSource(['a', 'b', 'x', '/', '-', '0', 'api', '/v1']), fc.boolean())
  .map(([body, end]) => `/${body}${end ? '$' : ''}`);
const textRegex = fc
  .tuple(fc.constantFrom('', '^', '(?i)', 'CN=', '^CN='), regexSource(['a', 'b', ' ', 'x', ',', '=', 'beta']), fc.boolean())
  .map(([start, body, end]) => `${start}${body}${end ? '$' : ''}`);

interface Accepted {
  readonly source: string;
  readonly alphabet: RegexAlphabet;
}

function accepted(sources: readonly string[], alphabet: RegexAlphabet): Accepted[] {
  return sources.filter((source) => checkSafeRegex(source, alphabet).ok).map((source) => ({ source, alphabet }));
}

/** The budget of the counted work: linear in the subject, for a regex of this many instructions. */
function workWithinBudget(regex: Accepted, seeds: readonly number[]): void {
  const tree = parseSafeRegex(regex.source, regex.alphabet)!;
  const program = compileProgram(tree);
  const budget = stepsPerByteAndInstruction * (subjectLength + 1) * program.instructions.length;
  for (const seed of seeds) {
    const subject = adversarialSubject(tree, subjectLength, choices(seed));
    const { steps, exceeded } = countSteps(program, subject, budget);
    expect(exceeded, `${regex.source} on subject seed ${seed}: more than ${budget} steps (${steps})`).toBe(false);
  }
}

let prefix: string;
let scratch: string;

beforeAll(async () => {
  requireNginx();
  prefix = await createNginxPrefix();
  scratch = await mkdtemp(join(tmpdir(), 'i2n-regex-property-'));
});

afterAll(async () => {
  await stopAllNginx();
  await rm(prefix, { recursive: true, force: true });
  await rm(scratch, { recursive: true, force: true });
});

/** The config: each path regex a location, each text regex a map key on a request header, under PCRE's work limit. */
function regexConfig(paths: readonly Accepted[], texts: readonly Accepted[], port: number): string {
  const limit = `(*LIMIT_MATCH=${pcreStepsPerByte * (subjectLength + 1)})`;
  const directives = prefixDirectives(prefix);
  return `${directives.main}
http {
${directives.http}
    merge_slashes off;
    large_client_header_buffers 4 16k;
${texts.map((t, i) => `    map $http_x_probe $probe_${i} {\n        "~${limit}${t.source}" 1;\n        default 0;\n    }`).join('\n')}
    server {
        listen 127.0.0.1:${port};
${paths.map((p, i) => `        location ~* "${limit}^${p.source}" {\n            return 200 "path ${i}";\n        }`).join('\n')}
${texts.map((_, i) => `        location = /text-${i} {\n            return 200 "text $probe_${i}";\n        }`).join('\n')}
        location / {
            return 404;
        }
    }
}
`;
}

/** GET with the path and the X-Probe header; the status, which is 500 when PCRE ran past its limit. */
function probe(port: number, path: string, header?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path, headers: header === undefined ? {} : { 'x-probe': header }, agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end();
  });
}

const uriOf = (subject: Uint8Array) => [...subject].map((byte) => (/[A-Za-z0-9_~-]/.test(String.fromCharCode(byte)) || byte === 47 ? String.fromCharCode(byte) : `%${byte.toString(16).padStart(2, '0')}`)).join('');
const headerOf = (subject: Uint8Array) => [...subject].map((byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : 'x')).join('');

let cases = 0;

describe('accepted regexes', () => {
  it(`compile in nginx and match 4 KB hostile subjects in linear work (${runs} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(pathRegex, { minLength: 1, maxLength: 8 }),
        fc.array(textRegex, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
        async (pathSources, textSources, seeds) => {
          const paths = accepted(pathSources, pathRegexAlphabet);
          const texts = accepted(textSources, textRegexAlphabet);
          for (const regex of [...paths, ...texts]) workWithinBudget(regex, seeds);
          if (paths.length + texts.length === 0) return;

          const [port] = (await freePorts(1)) as [number];
          const conf = join(scratch, `case-${cases++}.conf`);
          await writeFile(conf, regexConfig(paths, texts, port));
          const tested = await nginxTest(conf, prefix);
          expect(tested.output, [...paths, ...texts].map((r) => r.source).join('\n')).not.toMatch(/\[emerg\]/);
          expect(tested.ok).toBe(true);
          const nginx = await startNginx({ prefix, conf, ports: [port] });
          try {
            for (const [index, regex] of [...paths, ...texts].entries()) {
              const tree = parseSafeRegex(regex.source, regex.alphabet)!;
              const subject = adversarialSubject(tree, subjectLength, choices(seeds[0]! + index));
              const status = index < paths.length ? await probe(port, uriOf(subject)) : await probe(port, `/text-${index - paths.length}`, headerOf(subject));
              expect(status, `${regex.source}: nginx answered 500, PCRE ran past its work limit`).not.toBe(500);
            }
          } finally {
            await nginx.stop();
          }
        },
      ),
      { numRuns: runs, seed: process.env.I2N_PROPERTY_SEED ? Number(process.env.I2N_PROPERTY_SEED) : undefined },
    );
  }, Math.max(120_000, runs * 3_000));

  it('the budget catches what the grammar refuses: each costly shape of the issue runs past it', () => {
    for (const source of ['/(a|a)*$', '/(.*a){12}$', '/.*a.*b$', '/\\d+\\d+$', '/(a|aa)*$']) {
      expect(checkSafeRegex(source, pathRegexAlphabet).ok, source).toBe(false);
      const tree = parseSafeRegex(source, pathRegexAlphabet)!;
      const program = compileProgram(tree);
      const budget = stepsPerByteAndInstruction * (subjectLength + 1) * program.instructions.length;
      const worst = Math.max(...[0, 1, 2, 3, 4, 5, 6, 7].map((seed) => countSteps(program, adversarialSubject(tree, subjectLength, choices(seed)), budget).steps));
      expect(worst, source).toBeGreaterThan(budget);
    }
  });
});
