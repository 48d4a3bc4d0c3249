import http from 'node:http';
import https from 'node:https';
import type { FakeApiServer, JsonObject } from './fake-apiserver.js';

/**
 * Plain HTTP(S) clients for protocol tests of the fake API server: one request/response, and a
 * watch stream read line by line, so tests see exactly what goes over the wire.
 */

export interface HttpAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: JsonObject;
}

export interface CallOptions {
  readonly body?: unknown;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
}

function transportOptions(fake: FakeApiServer, target: string, method: string, options: CallOptions): https.RequestOptions {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  if (options.body !== undefined) headers['Content-Type'] = options.contentType ?? 'application/json';
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  const url = new URL(target, fake.url);
  return { method, hostname: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, headers, ...(fake.caPem ? { ca: fake.caPem } : {}) };
}

function send(fake: FakeApiServer, options: https.RequestOptions, callback: (response: http.IncomingMessage) => void): http.ClientRequest {
  return fake.url.startsWith('https:') ? https.request(options, callback) : http.request(options, callback);
}

export function call(fake: FakeApiServer, method: string, target: string, options: CallOptions = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = send(fake, transportOptions(fake, target, method, options), (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: JsonObject;
        try {
          json = JSON.parse(text) as JsonObject;
        } catch {
          json = undefined as unknown as JsonObject;
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    if (options.body !== undefined) request.write(typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    request.end();
  });
}

export interface WatchEvent {
  readonly type: string;
  readonly object: JsonObject;
}

/** How a watch stream ended: `clean` = the chunked body completed; `cut` = the connection died mid-body. */
export type WatchEnding = 'clean' | 'cut';

export class WatchClient {
  readonly events: WatchEvent[] = [];
  #consumed = 0;
  #waiters: (() => void)[] = [];
  #buffer = '';
  #ending: WatchEnding | undefined;
  readonly ended: Promise<WatchEnding>;
  readonly #request: http.ClientRequest;
  /** Resolves once the response headers arrived. */
  readonly response: Promise<http.IncomingMessage>;

  constructor(fake: FakeApiServer, target: string, options: CallOptions = {}) {
    let settleEnded: (ending: WatchEnding) => void = () => {};
    this.ended = new Promise((resolve) => (settleEnded = resolve));
    let settleResponse: (response: http.IncomingMessage) => void = () => {};
    let failResponse: (error: Error) => void = () => {};
    this.response = new Promise((resolve, reject) => {
      settleResponse = resolve;
      failResponse = reject;
    });
    this.#request = send(fake, transportOptions(fake, target, 'GET', options), (response) => {
      settleResponse(response);
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        this.#buffer += chunk;
        let newline: number;
        while ((newline = this.#buffer.indexOf('\n')) >= 0) {
          const line = this.#buffer.slice(0, newline);
          this.#buffer = this.#buffer.slice(newline + 1);
          if (line.trim() !== '') this.events.push(JSON.parse(line) as WatchEvent);
        }
        for (const wake of this.#waiters.splice(0)) wake();
      });
      response.on('error', () => {});
      response.on('close', () => {
        this.#ending = response.complete ? 'clean' : 'cut';
        settleEnded(this.#ending);
        for (const wake of this.#waiters.splice(0)) wake();
      });
    });
    this.#request.on('error', (error) => {
      failResponse(error);
      this.#ending ??= 'cut';
      settleEnded(this.#ending);
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.#request.end();
    // A watch that never answers must not keep an unhandled rejection around.
    this.response.catch(() => {});
  }

  /** The next event not yet returned by next(); rejects after `timeoutMs` (a bounded wait) or when the stream ends. */
  async next(timeoutMs = 10_000): Promise<WatchEvent> {
    const deadline = Date.now() + timeoutMs;
    while (this.#consumed >= this.events.length) {
      if (this.#ending !== undefined) throw new Error(`watch stream ended (${this.#ending})`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no watch event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.events[this.#consumed++]!;
  }

  close(): void {
    this.#request.destroy();
  }
}

export async function openWatch(fake: FakeApiServer, target: string, options: CallOptions = {}): Promise<WatchClient> {
  const watch = new WatchClient(fake, target, options);
  await watch.response;
  return watch;
}
