import { describe, expect, it } from 'vitest';
import { endpointAddress, endpointHost, namesUrlByAddress, resolvesEndpoints, serviceEndpoints, servicesHaveIpv6, type SliceEndpoints } from './endpoints.js';

const slice = (endpoints: SliceEndpoints['endpoints'], port = 8080, addressType = 'IPv4', name = 'http'): SliceEndpoints => ({
  addressType,
  ports: [{ name, port }],
  endpoints,
});

describe('serviceEndpoints', () => {
  it('takes the ready endpoints (ready absent counts as ready), on the slice port named as the Service port', () => {
    const found = serviceEndpoints(
      [
        slice([{ addresses: ['10.0.0.2'] }, { addresses: ['10.0.0.1'], conditions: { ready: true } }, { addresses: ['10.0.0.3'], conditions: { ready: false } }]),
        slice([{ addresses: ['10.0.0.9'] }], 9090, 'IPv4', 'metrics'),
      ],
      'http',
    );
    expect(found.endpoints.map(endpointAddress)).toEqual(['10.0.0.1:8080', '10.0.0.2:8080']);
  });

  it('falls back to endpoints serving while they terminate only when none is ready, as kube-proxy does', () => {
    const terminating = { addresses: ['10.0.0.5'], conditions: { ready: false, serving: true, terminating: true } };
    const unready = { addresses: ['10.0.0.6'], conditions: { ready: false, serving: false, terminating: true } };
    expect(serviceEndpoints([slice([terminating, unready, { addresses: ['10.0.0.7'] }])], 'http').endpoints.map((e) => e.ip)).toEqual(['10.0.0.7']);
    expect(serviceEndpoints([slice([terminating, unready])], 'http').endpoints.map((e) => e.ip)).toEqual(['10.0.0.5']);
    expect(serviceEndpoints([slice([unready])], 'http').endpoints).toEqual([]);
  });

  it('leaves out addresses no tenant may reach, and says which', () => {
    const found = serviceEndpoints([slice([{ addresses: ['127.0.0.1', '169.254.169.254', '10.0.0.1', 'not-an-ip'] }])], 'http');
    expect(found.endpoints.map((e) => e.ip)).toEqual(['10.0.0.1']);
    expect(found.refused).toHaveLength(2);
  });

  it('reads IPv6 slices and the unnamed port', () => {
    const found = serviceEndpoints([slice([{ addresses: ['fd00::1'] }], 80, 'IPv6', '')], undefined);
    expect(found.endpoints.map(endpointAddress)).toEqual(['[fd00::1]:80']);
  });
});

describe('endpointHost', () => {
  it('names each endpoint on its own, address and port, one spelling per IPv6 address', () => {
    expect(endpointHost('shop', 'web', { ip: '10.1.2.3', family: 4, port: 8080 })).toBe('v4-10-1-2-3-p8080.web.shop.endpoints.ingress2nginx.internal');
    const short = endpointHost('shop', 'web', { ip: 'fd00::1', family: 6, port: 80 });
    expect(short).toBe('v6-fd00-0-0-0-0-0-0-1-p80.web.shop.endpoints.ingress2nginx.internal');
    expect(endpointHost('shop', 'web', { ip: 'FD00:0:0:0:0:0:0:0001', family: 6, port: 80 })).toBe(short);
    expect(endpointHost('shop', 'web', { ip: '::ffff:10.0.0.1', family: 6, port: 80 })).toBe('v6-0-0-0-0-0-ffff-a00-1-p80.web.shop.endpoints.ingress2nginx.internal');
  });
});

describe('resolvesEndpoints', () => {
  const resolver = { address: '127.0.0.1:10053', noEndpointsPort: 10054 };
  it('resolves with the sidecar resolver, endpoint upstreams and nginx 1.27.3 or later only', () => {
    expect(resolvesEndpoints({ upstreams: 'endpoints', endpointResolver: resolver, nginxVersion: '1.27.3' })).toBe(true);
    expect(resolvesEndpoints({ upstreams: 'endpoints', endpointResolver: resolver, nginxVersion: '1.26.3' })).toBe(false);
    expect(resolvesEndpoints({ upstreams: 'service', endpointResolver: resolver, nginxVersion: '1.28.2' })).toBe(false);
    expect(resolvesEndpoints({ upstreams: 'endpoints', nginxVersion: '1.28.2' })).toBe(false);
  });
});

describe('servicesHaveIpv6', () => {
  it('is on when some Service has an IPv6 cluster IP or family, from the Services alone', () => {
    expect(servicesHaveIpv6([{ spec: { clusterIP: '10.96.0.1' } }, { spec: {} }])).toBe(false);
    expect(servicesHaveIpv6([{ spec: { clusterIP: 'fd00::1' } }])).toBe(true);
    expect(servicesHaveIpv6([{ spec: { clusterIP: 'None', ipFamilies: ['IPv6'] } }])).toBe(true);
    expect(servicesHaveIpv6([{ spec: { ipFamilies: ['IPv4', 'IPv6'] } }])).toBe(true);
  });
});

describe('namesUrlByAddress', () => {
  it('finds a URL whose host is an IP address in annotations or ConfigMap data', () => {
    const annotated = (value: string) => ({ metadata: { annotations: { 'nginx.ingress.kubernetes.io/auth-url': value } } });
    expect(namesUrlByAddress(annotated('http://10.1.2.3/auth'))).toBe(true);
    expect(namesUrlByAddress(annotated('https://user@10.1.2.3:8443/auth'))).toBe(true);
    expect(namesUrlByAddress(annotated('http://[fd00::1]:80/'))).toBe(true);
    expect(namesUrlByAddress(annotated('http://auth.shop.svc.cluster.local/auth'))).toBe(false);
    expect(namesUrlByAddress({ metadata: {}, data: { 'global-auth-url': 'http://192.0.2.9/check' } })).toBe(true);
    expect(namesUrlByAddress({ metadata: { annotations: { note: 'no url' } } })).toBe(false);
  });
});
