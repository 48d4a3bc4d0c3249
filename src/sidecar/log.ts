import { printable } from '../model/printable.js';

export type LogFormat = 'json' | 'text';
export const logLevels = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];
type Fields = Readonly<Record<string, unknown>>;

/**
 * Log lines of the cluster mode: one JSON object per line (for log collectors) or plain text. Callers
 * pass messages and small fields only; key material and Secret data are never handed to the logger.
 * Messages carry values from the API (names, annotation values, nginx's echo of them), and `kubectl logs`
 * shows the lines on a terminal: both forms escape control characters and bidirectional overrides.
 */
export class Logger {
  private readonly least: number;

  /** Lines below `level` are not written. */
  constructor(
    private readonly format: LogFormat,
    private readonly write: (line: string) => void,
    level: LogLevel = 'info',
    private readonly now: () => Date = () => new Date(),
  ) {
    this.least = logLevels.indexOf(level);
  }

  debug(message: string, fields: Fields = {}): void {
    this.line('debug', message, fields);
  }

  info(message: string, fields: Fields = {}): void {
    this.line('info', message, fields);
  }

  warn(message: string, fields: Fields = {}): void {
    this.line('warn', message, fields);
  }

  error(message: string, fields: Fields = {}): void {
    this.line('error', message, fields);
  }

  /**
   * A line nginx wrote, forwarded as it is, at nginx's own level: its errors and warnings as ours, its
   * notices (a dozen at every reload) as debug; a line without a level (an access log) as info.
   */
  nginx(line: string): void {
    const level = /\[(emerg|alert|crit|error|warn|notice|info|debug)\]/.exec(line)?.[1];
    const ours: LogLevel = level === undefined ? 'info' : level === 'warn' ? 'warn' : ['notice', 'info', 'debug'].includes(level) ? 'debug' : 'error';
    this.line(ours, line, { source: 'nginx' });
  }

  private line(level: LogLevel, message: string, fields: Fields): void {
    if (logLevels.indexOf(level) < this.least) return;
    const time = this.now().toISOString();
    if (this.format === 'json') {
      // Still the same JSON: printable only turns characters JSON leaves raw into \u escapes.
      this.write(`${printable(JSON.stringify({ time, level, msg: message, ...fields }))}\n`);
      return;
    }
    const extra = Object.entries(fields)
      .map(([key, value]) => `${key}=${printable(JSON.stringify(value) ?? String(value))}`)
      .join(' ');
    this.write(`${time} ${level.toUpperCase().padEnd(5)} ${printable(message)}${extra ? ` ${extra}` : ''}\n`);
  }
}
