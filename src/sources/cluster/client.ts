import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import type { KubeConfig } from '@kubernetes/client-node';

/** A failed API call: the HTTP status and the reason of the `Status` body, when there is one. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: unknown;
  /** Default `application/json`; PATCH needs e.g. `application/merge-patch+json`. */
  readonly contentType?: string;
  /** Aborts the request (and a watch stream) when fired. */
  readonly signal?: AbortSignal;
  /** No response (headers) within this long is a failure; watch streams use their own watchdog. */
  readonly timeoutMs?: number;
}

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: Record<string, unknown>;
}

const defaultTimeoutMs = 30_000;

/**
 * The Kubernetes API over plain node:http/https. `@kubernetes/client-node` supplies the configuration
 * and credentials (`applyToHTTPSOptions`: CA, client certificates, tokens that it refreshes); requests
 * and watch streams are ours, so that every timeout, status and resourceVersion is under our control
 * (its informer stops for good on errors and never notices a hung stream).
 */
export class ApiClient {
  /** `answerTimeoutMs`: how long a request may wait for its response headers when it sets no `timeoutMs`. */
  constructor(
    private readonly config: KubeConfig,
    private readonly answerTimeoutMs = defaultTimeoutMs,
  ) {}

  get server(): string {
    return this.config.getCurrentCluster()?.server ?? '';
  }

  /** One request; a non-2xx answer throws ApiError. */
  async request<T = Record<string, unknown>>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    const text = await readAll(response);
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) throw apiError(status, text);
    return (text === '' ? {} : JSON.parse(text)) as T;
  }

  /**
   * A watch stream: calls `onEvent` for each line until the server ends the stream (resolves) or it
   * fails (rejects). `signal` aborts it; the caller's watchdog decides when a silent stream is dead.
   */
  async watch(path: string, options: RequestOptions & { readonly onEvent: (event: WatchEvent) => void }): Promise<void> {
    const response = await this.send('GET', path, { ...options, query: { ...options.query, watch: true } });
    const status = response.statusCode ?? 0;
    if (status !== 200) throw apiError(status, await readAll(response));
    await new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: response, crlfDelay: Infinity });
      // The first reason to stop wins: an event the caller refused (a 410, say) must not be reported
      // as the cut-off stream that stopping it causes.
      let failure: Error | undefined;
      const stop = (error: Error) => {
        failure ??= error;
        response.destroy();
      };
      const cutOff = () => reject(failure ?? new Error('the watch stream was cut off'));
      lines.on('line', (line) => {
        if (failure || line.trim() === '') return;
        let event: WatchEvent;
        try {
          event = JSON.parse(line) as WatchEvent;
        } catch {
          stop(new Error('the watch stream sent a line that is not JSON'));
          return;
        }
        try {
          options.onEvent(event);
        } catch (error) {
          stop(error as Error);
        }
      });
      // `on`, not `once`: a stream that is cut off can report more than one error, and none may go
      // unheard; readline passes the stream's errors on, so it needs a listener too.
      response.on('error', (error) => reject(failure ?? error));
      lines.on('error', (error) => reject(failure ?? error));
      response.once('aborted', cutOff);
      lines.once('close', () => (failure || response.readableAborted || !response.complete ? cutOff() : resolve()));
    });
  }

  private async send(method: string, path: string, options: RequestOptions): Promise<http.IncomingMessage> {
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const requestOptions: https.RequestOptions = {
      method,
      headers: {
        Accept: 'application/json',
        ...(body !== undefined && { 'Content-Type': options.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(body) }),
      },
    };
    await this.config.applyToHTTPSOptions(requestOptions);
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = transport.request(url, { ...requestOptions, ...(options.signal && { signal: options.signal }) }, (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      const timeoutMs = options.timeoutMs ?? this.answerTimeoutMs;
      const timer = setTimeout(() => request.destroy(new Error(`no answer from the API server within ${timeoutMs} ms`)), timeoutMs);
      // Also after the response came: aborting a watch errors the request, and that must not go unheard.
      request.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      request.end(body);
    });
  }
}

function readAll(response: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}

function apiError(status: number, text: string): ApiError {
  let reason = '';
  let message = text.slice(0, 300);
  try {
    const parsed = JSON.parse(text) as { reason?: string; message?: string };
    reason = parsed.reason ?? '';
    message = parsed.message ?? message;
  } catch {
    // Not a Status object: keep the beginning of the text.
  }
  return new ApiError(status, reason, `${status}${reason ? ` ${reason}` : ''}: ${message}`);
}
