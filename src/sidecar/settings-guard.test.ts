import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../model/diagnostics.js';
import type { SourceObject } from '../sources/snapshot.js';
import { changedKeys, errorsAt, settingsVerdict } from './settings-guard.js';

const configMap = (data: Record<string, string>): SourceObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'controller', namespace: 'ingress-nginx', annotations: {}, labels: {}, creationTimestamp: '' },
  raw: { data },
});

const at = (key: string, message: string): Diagnostic => ({
  severity: 'error',
  code: 'configmap-invalid',
  resource: { kind: 'ConfigMap', namespace: 'ingress-nginx', name: 'controller' },
  field: `data["${key}"]`,
  path: ['data', key],
  message,
});

const skipped = (name: string): Diagnostic => ({ severity: 'error', code: 'ingress-skipped', resource: { kind: 'Ingress', namespace: 'web', name }, message: 'left out' });

describe('the settings guard', () => {
  const lastGood = configMap({ 'ssl-redirect': 'true', 'main-snippet': 'x' });
  const current = configMap({ 'ssl-redirect': 'maybe', 'main-snippet': 'x' });

  it('refuses a change at each key with an error the last good settings did not have', () => {
    const known = errorsAt([at('main-snippet', 'refused')], lastGood);
    const verdict = settingsVerdict([at('main-snippet', 'refused'), at('ssl-redirect', 'bad value')], () => [], { current, lastGood, lastGoodErrors: known });
    expect(verdict.rejected.map((r) => [r.key, r.diagnostic.code, r.diagnostic.field])).toEqual([['ssl-redirect', 'configmap-rejected', 'data["ssl-redirect"]']]);
  });

  it('refuses a valid change that leaves out Ingresses the last good settings serve, naming them and the changed keys', () => {
    const verdict = settingsVerdict([skipped('a'), skipped('b')], () => [skipped('a')], { current, lastGood, lastGoodErrors: new Set() });
    expect(verdict.rejected).toHaveLength(1);
    expect(verdict.rejected[0]?.diagnostic.message).toContain('"ssl-redirect"');
    expect(verdict.rejected[0]?.diagnostic.message).toContain('web/b');
    expect(verdict.rejected[0]?.diagnostic.message).not.toContain('web/a');
  });

  it('takes a change that leaves out nothing more', () => {
    expect(settingsVerdict([skipped('a')], () => [skipped('a')], { current, lastGood, lastGoodErrors: new Set() }).rejected).toEqual([]);
    expect(changedKeys(lastGood, current)).toEqual(['ssl-redirect']);
  });
});
