import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AjvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { riskyRules } from '../../src/report/risky.js';
import { runCli } from '../support/cli.js';
import { testNowText } from '../support/options.js';
import { goldenOptions } from '../support/golden.js';

/** `--format sarif` of validate, render and diff, validated against the vendored SARIF 2.1.0 schema. */

const schema = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'vendor', 'sarif', 'sarif-2.1.0-rtm.5.json'), 'utf8')) as object;
// Both are CommonJS whose class/function is also their `default` export, whichever way they are loaded.
const Ajv = AjvDraft04.default;
const addFormats = ajvFormats.default;
// The schema's language-tag pattern is not valid with the `u` flag; the schema itself is kept as published.
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
addFormats(ajv);
const validateSarif = ajv.compile(schema);

interface SarifLog {
  version: string;
  runs: {
    tool: { driver: { name: string; rules: { id: string; help: { text: string } }[] } };
    results: {
      ruleId: string;
      ruleIndex: number;
      level: string;
      message: { text: string };
      locations?: { physicalLocation?: { artifactLocation: { uri: string }; region?: { startLine: number; startColumn?: number } } }[];
    }[];
  }[];
}

function checked(stdout: string): SarifLog {
  const log = JSON.parse(stdout) as SarifLog;
  const valid = validateSarif(log);
  expect(validateSarif.errors ?? []).toEqual([]);
  expect(valid).toBe(true);
  return log;
}

describe('SARIF output', () => {
  it('the schema check can fail: a log with an unknown level and no version is refused', () => {
    expect(validateSarif({ runs: [{ tool: { driver: { name: 'x' } }, results: [{ message: { text: 'm' }, level: 'fatal' }] }] })).toBe(false);
  });

  it.each(['hostile', 'https-backends', 'gateway-status', 'passthrough', 'classes', 'gateway-mixed'])('validate --format sarif on %s: valid, one result per diagnostic, at the field', async (name) => {
    const sarif = await runCli(['validate', '-f', `fixtures/${name}/input`, ...goldenOptions(name), '--format', 'sarif']);
    const json = await runCli(['validate', '-f', `fixtures/${name}/input`, ...goldenOptions(name), '--format', 'json']);
    expect(sarif.exitCode).toBe(json.exitCode);
    const log = checked(sarif.stdout);
    const diagnostics = (JSON.parse(json.stdout) as { diagnostics: { code: string; file: string | null; line: number | null; column: number | null; message: string }[] }).diagnostics;
    const run = log.runs[0]!;
    expect(run.results.map((r) => r.ruleId)).toEqual(diagnostics.map((d) => d.code));
    run.results.forEach((result, i) => {
      const d = diagnostics[i]!;
      expect(run.tool.driver.rules[result.ruleIndex]!.id).toBe(result.ruleId);
      expect(result.message.text.endsWith(d.message)).toBe(true);
      const physical = result.locations?.[0]?.physicalLocation;
      if (d.file !== null) {
        expect(decodeURIComponent(physical!.artifactLocation.uri)).toBe(d.file);
        expect(physical!.region?.startLine).toBe(d.line);
        if (d.column !== null) expect(physical!.region?.startColumn).toBe(d.column);
      }
    });
    for (const rule of run.tool.driver.rules) expect(rule.help.text.length).toBeGreaterThan(20);
  });

  it('render --format sarif writes the SARIF log alone on stdout', async () => {
    const output = await mkdtemp(join(tmpdir(), 'ingress2nginx-sarif-'));
    try {
      const result = await runCli(['render', '-f', 'fixtures/merging/input', '-o', output, ...goldenOptions('merging'), '--format', 'sarif']);
      const log = checked(result.stdout);
      expect(log.runs[0]!.results.length).toBeGreaterThan(0);
      expect(result.stderr).toContain('wrote ');
    } finally {
      await rm(output, { recursive: true, force: true });
    }
  });

  it.each(Object.keys(riskyRules))('diff --format sarif carries the risky change %s at its manifest line', async (rule) => {
    const dir = `fixtures/risky/${rule}/fires`;
    const args = (() => {
      try {
        return readFileSync(join(dir, 'args'), 'utf8').trim().split(/\s+/);
      } catch {
        return [];
      }
    })();
    const result = await runCli(['diff', '-f', `${dir}/new`, '--base-manifests', `${dir}/base`, '--now', testNowText, ...args, '--format', 'sarif']);
    expect(result.exitCode).toBe(1);
    const log = checked(result.stdout);
    const risky = log.runs[0]!.results.filter((r) => r.ruleId === `risky-change/${rule}`);
    expect(risky).toHaveLength(1);
    expect(risky[0]!.level).toBe('warning');
    expect(risky[0]!.locations?.[0]?.physicalLocation?.artifactLocation.uri).toBe(`${dir}/new/manifests.yaml`);
    expect(risky[0]!.locations?.[0]?.physicalLocation?.region?.startLine).toBeGreaterThan(1);
  });
});
