import { describe, expect, it } from 'vitest';
import { tlsLibraryOf } from './nginx.js';

describe('tlsLibraryOf', () => {
  it('names the library nginx runs with when it differs from the one it was built with (a shared libssl)', () => {
    const debian = [
      'nginx version: nginx/1.22.1',
      'built with OpenSSL 3.0.22 25 Aug 2026 (running with OpenSSL 3.0.19 27 Jan 2026)',
      'TLS SNI support enabled',
      'configure arguments: --with-cc-opt=-O2',
    ].join('\n');
    expect(tlsLibraryOf(debian)).toBe('OpenSSL 3.0.19');
  });

  it('names the library nginx was built with when that is all it prints (a static link)', () => {
    const staticBuild = 'nginx version: nginx/1.26.3\nbuilt with OpenSSL 3.5.7 9 Jun 2026\nTLS SNI support enabled\n';
    expect(tlsLibraryOf(staticBuild)).toBe('OpenSSL 3.5.7');
    expect(tlsLibraryOf('nginx version: nginx/1.25.3\nbuilt with LibreSSL 3.8.2\n')).toBe('LibreSSL 3.8.2');
  });

  it('is undefined for an nginx built without TLS', () => {
    expect(tlsLibraryOf('nginx version: nginx/1.22.1\nconfigure arguments: --with-stream\n')).toBeUndefined();
  });
});
