import { describe, expect, it } from 'vitest';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { translate } from '../../src/translate/translate.js';
import { configMap } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';

/** The warnings of issue 37 that have no defect of their own: each says what a setting lets through. */

const controller = (data: Record<string, string>): SourceObject[] => [configMap('infra', 'controller', data)];
const diagnostics = (objects: readonly SourceObject[]) => translate({ objects }, testTranslateOptions({ configMap: 'infra/controller' })).diagnostics;

describe('use-forwarded-headers with the default proxy-real-ip-cidr', () => {
  it('warns at the key: any client chooses the address whitelist-source-range sees', () => {
    const found = diagnostics(controller({ 'use-forwarded-headers': 'true' })).filter((d) => d.code === 'forwarded-headers-trust-all');
    expect(found).toEqual([
      expect.objectContaining({ severity: 'warning', field: 'data["use-forwarded-headers"]', message: expect.stringMatching(/0\.0\.0\.0\/0, the default\).*whitelist-source-range/) }),
    ]);
    const proxyProtocol = diagnostics(controller({ 'use-proxy-protocol': 'true', 'proxy-real-ip-cidr': '10.0.0.0/8,::/0' })).filter((d) => d.code === 'forwarded-headers-trust-all');
    expect(proxyProtocol).toEqual([expect.objectContaining({ field: 'data["use-proxy-protocol"]', message: expect.stringContaining('(::/0)') })]);
  });

  it('says nothing when the trusted peers are named, or the headers are not used', () => {
    expect(diagnostics(controller({ 'use-forwarded-headers': 'true', 'proxy-real-ip-cidr': '10.0.0.0/8' })).map((d) => d.code)).not.toContain('forwarded-headers-trust-all');
    expect(diagnostics(controller({ 'proxy-real-ip-cidr': '0.0.0.0/0' })).map((d) => d.code)).not.toContain('forwarded-headers-trust-all');
  });
});
