import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../model/diagnostics.js';
import { formatText, formatTextReport, repeatedCollapsedAbove, repeatedShown } from './diagnostics-format.js';

const passthroughInfo = (name: string, line: number): Diagnostic => ({
  severity: 'info',
  code: 'annotation-differs',
  resource: { kind: 'Ingress', namespace: 'shop', name },
  file: 'ingresses.yaml',
  line,
  field: 'metadata.annotations["nginx.ingress.kubernetes.io/ssl-passthrough"]',
  message: 'it differs from ingress-nginx on purpose.',
});

const lines = (text: string): string[] => text.split('\n').filter(Boolean);

describe('formatTextReport', () => {
  it('is empty without diagnostics', () => {
    expect(formatTextReport([])).toBe('');
  });

  it('shows an info repeated word for word the first three times, then counts the rest in one line', () => {
    const infos = Array.from({ length: 3334 }, (_, i) => passthroughInfo(`app-${i}`, 10 + i));
    const report = lines(formatTextReport(infos));
    expect(report).toEqual([
      ...infos.slice(0, repeatedShown).map((d) => formatText([d]).trimEnd()),
      'info [annotation-differs] metadata.annotations["nginx.ingress.kubernetes.io/ssl-passthrough"]: the same for 3,331 more Ingresses (--format json lists every one)',
      '0 error(s), 0 warning(s), 3334 info',
    ]);
  });

  it('shows every error, and a warning or info repeated on ten places', () => {
    const error = (name: string): Diagnostic => ({ ...passthroughInfo(name, 1), severity: 'error' });
    const errors = Array.from({ length: 12 }, (_, i) => error(`e-${i}`));
    const warnings = Array.from({ length: repeatedCollapsedAbove }, (_, i): Diagnostic => ({ ...passthroughInfo(`w-${i}`, 1), severity: 'warning' }));
    const infos = Array.from({ length: repeatedCollapsedAbove }, (_, i) => passthroughInfo(`i-${i}`, 2 + i));
    const diagnostics = [...errors, ...warnings, ...infos];
    expect(formatTextReport(diagnostics)).toBe(`${formatText(diagnostics)}12 error(s), 10 warning(s), 10 info\n`);
  });

  it('folds a warning repeated word for word as it folds an info, apart from infos of the same words', () => {
    const affinity = (name: string, severity: Diagnostic['severity']): Diagnostic => ({ ...passthroughInfo(name, 1), severity, code: 'annotation-ignored' });
    const warnings = Array.from({ length: 30 }, (_, i) => affinity(`w-${i}`, 'warning'));
    const infos = Array.from({ length: 11 }, (_, i) => affinity(`i-${i}`, 'info'));
    const report = lines(formatTextReport([...warnings, ...infos]));
    expect(report).toEqual([
      ...warnings.slice(0, repeatedShown).map((d) => formatText([d]).trimEnd()),
      'warning [annotation-ignored] metadata.annotations["nginx.ingress.kubernetes.io/ssl-passthrough"]: the same for 27 more Ingresses (--format json lists every one)',
      ...infos.slice(0, repeatedShown).map((d) => formatText([d]).trimEnd()),
      'info [annotation-ignored] metadata.annotations["nginx.ingress.kubernetes.io/ssl-passthrough"]: the same for 8 more Ingresses (--format json lists every one)',
      '0 error(s), 30 warning(s), 11 info',
    ]);
  });

  it('counts infos apart when their code, field or message differ, and keeps the order of the rest', () => {
    const other = (name: string): Diagnostic => ({ ...passthroughInfo(name, 1), field: 'metadata.annotations["nginx.ingress.kubernetes.io/backend-protocol"]' });
    const error: Diagnostic = { ...passthroughInfo('z', 99), severity: 'error', code: 'resource-malformed' };
    const others = Array.from({ length: 11 }, (_, i) => other(`o-${i}`));
    const passthrough = Array.from({ length: 12 }, (_, i) => passthroughInfo(`p-${i}`, i));
    const report = lines(formatTextReport([...others, ...passthrough, error]));
    expect(report).toHaveLength(3 + 1 + 3 + 1 + 1 + 1);
    expect(report[3]).toBe('info [annotation-differs] metadata.annotations["nginx.ingress.kubernetes.io/backend-protocol"]: the same for 8 more Ingresses (--format json lists every one)');
    expect(report[4]).toBe(formatText([passthrough[0]!]).trimEnd());
    expect(report[7]).toContain('ssl-passthrough"]: the same for 9 more Ingresses');
    expect(report[8]).toBe(formatText([error]).trimEnd());
  });

  it('counts infos apart when only their code or only their message differs', () => {
    const differentCode = Array.from({ length: 11 }, (_, i): Diagnostic => ({ ...passthroughInfo(`c-${i}`, i), code: 'annotation-ignored' }));
    const differentMessage = Array.from({ length: 11 }, (_, i): Diagnostic => ({ ...passthroughInfo(`m-${i}`, i), message: 'another reason.' }));
    const same = Array.from({ length: 11 }, (_, i) => passthroughInfo(`s-${i}`, i));
    const counting = lines(formatTextReport([...differentCode, ...differentMessage, ...same])).filter((line) => line.includes('the same for'));
    expect(counting).toEqual([
      expect.stringMatching(/^info \[annotation-ignored\] .*: the same for 8 more Ingresses/),
      expect.stringMatching(/^info \[annotation-differs\] .*: the same for 8 more Ingresses/),
      expect.stringMatching(/^info \[annotation-differs\] .*: the same for 8 more Ingresses/),
    ]);
  });

  it('says the plural of the kind', () => {
    const policy = (name: string): Diagnostic => ({ ...passthroughInfo(name, 1), resource: { kind: 'BackendTLSPolicy', namespace: 'shop', name } });
    const report = lines(formatTextReport(Array.from({ length: 11 }, (_, i) => policy(`p-${i}`))));
    expect(report[3]).toContain('the same for 8 more BackendTLSPolicies');
  });

  it('names no kind when the rest are of several kinds', () => {
    const configMap = (name: string): Diagnostic => ({ ...passthroughInfo(name, 1), resource: { kind: 'ConfigMap', namespace: 'shop', name } });
    const infos = [...Array.from({ length: 10 }, (_, i) => passthroughInfo(`i-${i}`, i)), configMap('c')];
    expect(lines(formatTextReport(infos))[3]).toContain('the same for 8 more places');
  });
});
