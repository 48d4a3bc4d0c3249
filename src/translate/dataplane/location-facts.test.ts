import { describe, expect, it } from 'vitest';
import type { Location } from '../../model/nginx.js';
import { locationFacts, LocationFactsMemo } from './location-facts.js';

const proxied = (path: string, upstream: string, extra: Partial<Location> = {}): Location => ({
  modifier: '',
  path,
  comment: path,
  plainHttp: { redirect: true, serve: false },
  proxy: { upstream, grpc: false, module: 'proxy', scheme: 'http', pass: `http://${upstream}`, host: '$host', httpVersion: '1.1', headers: [], inheritsRequestHeaders: true, interceptErrors: false },
  ...extra,
});
const redirectOnly = (upstream: string, readTimeout: string): Location[] => {
  const acme = proxied('/.well-known/acme-challenge/', upstream, { plainHttp: { redirect: false, serve: true } });
  return [
    { modifier: '', path: '/', comment: '/', plainHttp: { redirect: true, serve: false } },
    ...(acme.proxy ? [{ ...acme, proxy: { ...acme.proxy, tuning: { readTimeout } } }] : []),
  ];
};
const notFound: Location = { modifier: '', path: '/', comment: 'none', plainHttp: { redirect: false, serve: true }, returnStatus: 404 };

describe('location facts', () => {
  it('lists the upstream blocks once each, in the order the locations first use them, and the canaries', () => {
    const canaried = proxied('/', 'aa_web_app_80');
    const withCanary: Location = { ...canaried, proxy: { ...canaried.proxy!, canary: { upstream: 'bb_web_app-v2_80', comment: 'canary' } } };
    const facts = locationFacts([withCanary, proxied('/api', 'cc_web_api_80'), proxied('/again', 'aa_web_app_80')]);
    expect(facts.upstreams).toEqual(['aa_web_app_80', 'bb_web_app-v2_80', 'cc_web_api_80']);
    expect(facts.canaries).toEqual(['bb_web_app-v2_80']);
    expect(facts.plainHttp).toBeUndefined();
    expect(locationFacts([notFound]).plainHttp).toBe('not-found');
  });

  it('hands on each ACME proxy shape as found, whichever hosts had it before', () => {
    const memo = new LocationFactsMemo();
    const shapeOf = (locations: Location[]) => {
      const sharing = memo.of(locations).plainHttp;
      return typeof sharing === 'object' ? sharing.shape : undefined;
    };
    const [a, b, c] = [redirectOnly('aa_web_a_80', '60s'), redirectOnly('bb_web_b_80', '90s'), redirectOnly('cc_web_c_80', '60s')];
    expect(shapeOf(a)).toBeDefined();
    expect(shapeOf(b)).not.toBe(shapeOf(a));
    // Another upstream, the same settings: the same shape.
    expect(shapeOf(c)).toBe(shapeOf(a));
    expect(memo.of(b).plainHttp).toEqual(locationFacts(b).plainHttp);
  });

  it('keeps the facts of a locations array, and makes them for another array with other locations', () => {
    const memo = new LocationFactsMemo();
    const first = [proxied('/', 'aa_web_app_80')];
    const facts = memo.of(first);
    expect(memo.of(first)).toBe(facts);
    // Same length, same shape: only the array tells them apart.
    const second = [proxied('/', 'dd_web_other_80')];
    expect(memo.of(second).upstreams).toEqual(['dd_web_other_80']);
    expect(memo.of(first)).toBe(facts);
  });
});
