export type LogFormat = 'json' | 'text';
type Level = 'debug' | 'info' | 'warn' | 'error';
type Fields = Readonly<Record<string, unknown>>;

/**
 * Log lines of the cluster mode: one JSON object per line (for log collectors) or plain text. Callers
 * pass messages and small fields only; key material and Secret data are never handed to the logger.
 */
export class Logger {
  constructor(
    private readonly format: LogFormat,
    private readonly write: (line: string) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

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

  /** A line nginx wrote, forwarded as it is (nginx's own level is inside it). */
  nginx(line: string): void {
    this.line('info', line, { source: 'nginx' });
  }

  private line(level: Level, message: string, fields: Fields): void {
    const time = this.now().toISOString();
    if (this.format === 'json') {
      this.write(`${JSON.stringify({ time, level, msg: message, ...fields })}\n`);
      return;
    }
    const extra = Object.entries(fields)
      .map(([key, value]) => `${key}=${typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value)}`)
      .join(' ');
    this.write(`${time} ${level.toUpperCase().padEnd(5)} ${message.replace(/[\u0000-\u001f]/g, ' ')}${extra ? ` ${extra}` : ''}\n`);
  }
}
