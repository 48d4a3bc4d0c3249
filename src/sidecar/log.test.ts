import { describe, expect, it } from 'vitest';
import { Logger, type LogLevel } from './log.js';

function logged(level: LogLevel | undefined, write: (log: Logger) => void): { level: string; msg: string }[] {
  const lines: string[] = [];
  write(new Logger('json', (line) => lines.push(line), level));
  return lines.map((line) => JSON.parse(line) as { level: string; msg: string });
}

describe('Logger', () => {
  it('writes info and above by default, and what --log-level asks for', () => {
    const all = (log: Logger) => {
      log.debug('d');
      log.info('i');
      log.warn('w');
      log.error('e');
    };
    expect(logged(undefined, all).map((l) => l.msg)).toEqual(['i', 'w', 'e']);
    expect(logged('debug', all).map((l) => l.msg)).toEqual(['d', 'i', 'w', 'e']);
    expect(logged('warn', all).map((l) => l.msg)).toEqual(['w', 'e']);
  });

  it("forwards nginx's lines at nginx's level: notices (every reload has a dozen) only at debug", () => {
    const lines = (log: Logger) => {
      log.nginx('2026/12/01 10:00:00 [notice] 12#12: signal process started');
      log.nginx('2026/12/01 10:00:00 [warn] 12#12: conflicting server name "a" on 0.0.0.0:80, ignored');
      log.nginx('2026/12/01 10:00:00 [emerg] 12#12: bind() to 0.0.0.0:443 failed (98: Address in use)');
      log.nginx('127.0.0.1 - - [01/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 2');
    };
    expect(logged(undefined, lines).map((l) => l.level)).toEqual(['warn', 'error', 'info']);
    expect(logged('debug', lines).map((l) => l.level)).toEqual(['debug', 'warn', 'error', 'info']);
  });

  it('shows values from the API escaped in both forms: no escape sequence, line break or bidi override reaches a terminal', () => {
    const hostile = 'shop\u001b[2J\r\nfake line\u009b31m\u202eabc';
    for (const format of ['json', 'text'] as const) {
      const lines: string[] = [];
      const log = new Logger(format, (line) => lines.push(line));
      log.warn(`Ingress web/${hostile} left out`, { annotation: hostile });
      log.nginx(`2026/12/01 10:00:00 [error] 12#12: host "${hostile}"`);
      expect(lines).toHaveLength(2);
      for (const line of lines) {
        expect(line.slice(0, -1), format).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
        expect(line.endsWith('\n')).toBe(true);
      }
      if (format === 'json') {
        const parsed = JSON.parse(lines[0]!) as { msg: string; annotation: string };
        expect(parsed.msg).toBe(`Ingress web/${hostile} left out`);
        expect(parsed.annotation).toBe(hostile);
      } else {
        expect(lines[0]).toContain('annotation="shop\\u001b[2J\\r\\nfake line\\u009b31m\\u202eabc"');
      }
    }
  });
});
