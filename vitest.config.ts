import { defineConfig } from 'vitest/config';

/**
 * Two runs: everything against the machine's nginx (`distro`: Debian 12's 1.22, the PROXY/unix
 * hand-off), and the golden `nginx -t` checks and the traffic tests again against nginx >= 1.25.5 built
 * by scripts/build-nginx.mjs (`pass`: the topology rendered for it). test/support/nginx.ts picks the
 * binary by I2N_NGINX_GENERATION.
 */
const passGenerationTests = [
  'test/golden/golden.test.ts',
  'test/integration/ingress-traffic.test.ts',
  'test/integration/ingress-settings.test.ts',
  'test/integration/gateway-traffic.test.ts',
  'test/integration/httproute-traffic.test.ts',
  'test/integration/httproute-scenarios.test.ts',
  'test/integration/gateway-own-ports.test.ts',
  'test/integration/httproute-matches.test.ts',
  'test/integration/grpcroute-traffic.test.ts',
  'test/integration/isolation-traffic.test.ts',
  'test/integration/isolation-round-three.test.ts',
  'test/integration/many-hosts.test.ts',
  'test/integration/backend-proxy-protocol.test.ts',
  'test/integration/stream-services.test.ts',
  'test/integration/snippets.test.ts',
  'test/integration/stickiness-traffic.test.ts',
  'test/integration/endpoint-rollout.test.ts',
  'test/integration/resolved-upstreams.test.ts',
  'test/integration/headers-traffic.test.ts',
  'test/integration/default-backend-traffic.test.ts',
  'test/integration/migration-breadth-traffic.test.ts',
  'test/integration/breadth-traffic.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'distro', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], env: { I2N_NGINX_GENERATION: 'distro' } } },
      { extends: true, test: { name: 'pass', include: passGenerationTests, env: { I2N_NGINX_GENERATION: 'pass' } } },
    ],
  },
});
