import { describe, expect, it } from 'vitest';
import type { OutputFile } from '../model/files.js';
import { FileDigests, generationOf } from './generation.js';

const file = (path: string, contents: string): OutputFile => ({ path, contents, mode: 0o600 });

describe('generation', () => {
  it('with the file digests of earlier builds is what it is without them, as files change, go and come back', () => {
    const digests = new FileDigests();
    const builds: OutputFile[][] = [
      [file('tls/a.pem', 'A1'), file('tls/b.pem', 'B1')],
      [file('tls/a.pem', 'A1'), file('tls/b.pem', 'B2')],
      [file('tls/a.pem', 'A1')],
      [file('tls/a.pem', 'A1'), file('tls/b.pem', 'B1')],
      [file('tls/b.pem', 'A1'), file('tls/a.pem', 'B1')],
    ];
    const generations = builds.map((files) => {
      const memoized = generationOf('conf', files, digests.begin());
      expect(memoized).toBe(generationOf('conf', files));
      return memoized;
    });
    expect(new Set(generations).size).toBe(4);
    expect(generations[3]).toBe(generations[0]);
  });

  it('changes with nginx.conf, a path and a mode', () => {
    const files = [file('tls/a.pem', 'A')];
    const base = generationOf('conf', files);
    expect(generationOf('conf2', files)).not.toBe(base);
    expect(generationOf('conf', [file('tls/b.pem', 'A')])).not.toBe(base);
    expect(generationOf('conf', [{ ...file('tls/a.pem', 'A'), mode: 0o644 }])).not.toBe(base);
    expect(base).toMatch(/^[0-9a-f]{32}$/);
  });
});
