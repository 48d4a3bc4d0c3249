/**
 * The typed nginx view-model. Every string in here is already validated against an allow-list and is
 * safe to place into nginx syntax as-is; templates only loop and branch over it. The `origin` fields are
 * provenance for reports (model/provenance.ts); templates never read them.
 *
 * This file holds the whole config and is the one module to import the model from: the http block's part
 * is in nginx-http.ts, the stream block's in nginx-stream.ts, and what both use in nginx-shared.ts.
 */

import type { OutputFile } from './files.js';
import type { HttpConfig } from './nginx-http.js';
import type { StreamConfig } from './nginx-stream.js';

export type * from './nginx-http.js';
export type * from './nginx-stream.js';
export type * from './nginx-shared.js';

/** How the SNI front hands a connection to the listener that serves it (http servers, stream servers). */
export type Handoff =
  /** nginx < 1.25.5: `proxy_pass` to unix sockets with PROXY protocol, real IP restored there. */
  | { readonly directive: 'proxy_pass'; readonly proxyProtocol: true }
  /** nginx >= 1.25.5: `pass` gives the listener the connection itself; no copy, the client address stays native. */
  | { readonly directive: 'pass'; readonly proxyProtocol: false };

/**
 * Stands in the rendered config for its generation until the build step knows it: a digest of the
 * whole output (this config and every key file), served on the control socket so that a reload can be
 * confirmed by asking the workers which generation they run. It holds spaces, which no allow-listed
 * value does, so its one occurrence is found without doubt.
 */
export const generationPlaceholder = 'ingress2nginx generation to be filled in';

export interface NginxConfig {
  /** Target nginx version the config was rendered for (from `--nginx-version`). */
  readonly nginxVersion: string;
  /** The SNI fronts' directive, and whether the listeners they hand connections to read a PROXY header first. */
  readonly handoff: Handoff;
  /** Absolute path of the stream module to `load_module`, when the distro builds it as a module. */
  readonly streamModulePath?: string;
  /** Absolute directory for pid, unix sockets and temp files. */
  readonly runDir: string;
  readonly pidFile: string;
  /** Unix socket of the control server: `GET /generation` answers `generationPlaceholder`, filled in by the build. */
  readonly controlSocket: string;
  readonly generation: string;
  readonly workerProcesses: string;
  /** `access_log` argument of the people's log (ingress-nginx's `upstreaminfo` format): an absolute path, or `off`. */
  readonly accessLog: string;
  /** `log-format-escape-json`: the people's log escapes its variables for JSON instead of nginx's default. */
  readonly accessLogEscapeJson: boolean;
  /** `log-format-upstream`: the people's log format (checked variables and text, for a single-quoted string); else ingress-nginx's default. */
  readonly accessLogFormat?: string;
  /**
   * Absolute path of the file nginx appends one line per request and per passthrough connection to, in
   * buffers (`buffer=64k flush=1s`), for the cluster mode's request metrics: it reads and truncates it.
   */
  readonly requestLog?: string;
  /** With `requestLog`: the control server answers `stub_status` at `/nginx_status` (nginx has the module). */
  readonly stubStatus?: boolean;
  readonly workerConnections: number;
  readonly http: HttpConfig;
  readonly stream: StreamConfig;
  /** The controller ConfigMap's `main-snippet`, when the operator allows snippets: raw text. */
  readonly mainSnippet?: string;
  /** Key material and CA bundles to write beside nginx.conf. */
  readonly files: readonly OutputFile[];
}

/** The main config file's name in the output folder; every other file is named relative to it. */
export const mainConfigName = 'nginx.conf';
