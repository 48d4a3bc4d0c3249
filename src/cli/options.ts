import { isAbsolute } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { isIP } from 'node:net';
import { isDnsHostname, isIpAddress, isKubernetesName } from '../translate/checks/allowlist.js';
import type { BaseTranslateOptions, TranslateOptions } from '../translate/options.js';
import { rfc3339 } from '../translate/settle/precedence.js';

/**
 * A combination of flags that cannot work, found after commander parsed them one by one: exit 2 with
 * the message. (commander's own InvalidArgumentError is caught and printed by commander only while it
 * parses a single option.)
 */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Flags of every command that translates: `render`, `validate`, `diff` and `run`. */
export interface TranslateFlags {
  readonly ingressClass: string;
  readonly gatewayClass: string;
  readonly gateway?: string[];
  readonly systemCaBundle: string;
  readonly watchIngressWithoutClass: boolean;
  readonly configmap?: string;
  readonly tcpServicesConfigmap?: string;
  readonly allowSnippetAnnotations: boolean;
  readonly snippetNamespace?: string[];
  readonly snippetNamespaceSelector?: Record<string, string>;
  readonly udpServicesConfigmap?: string;
  readonly defaultCertificate?: string;
  readonly defaultBackendService?: string;
  readonly allowCrossNamespaceSecrets: boolean;
  readonly allowCrossNamespaceAuthUrl?: boolean;
  readonly clusterDomain: string;
  readonly resolver?: string[];
  readonly disableSvcExternalName: boolean;
  readonly externalNameSuffix?: string[];
  readonly firstNamespaceOwnsHost: boolean;
  readonly upstreams: 'service' | 'endpoints';
  /** Unset: `off` for the file commands, `defaults.endpointResolverPort` for `run`. */
  readonly endpointResolver?: number | 'off';
  readonly unavailablePort: number;
  readonly httpPort: number;
  readonly httpsPort: number;
  readonly runDir: string;
  readonly accessLog: string;
  readonly certificatesPerHandshake: boolean;
}

/** `--format`: the same four for every command that reports (see `outputFormats`). */
export type OutputFormat = 'text' | 'json' | 'markdown' | 'sarif';

/** Command-line values of the commands that read manifests from files, as commander hands them over. */
export interface CommonFlags extends TranslateFlags {
  readonly filename: string[];
  readonly format: OutputFormat;
  readonly strict: boolean;
  /** `--quiet`: on stderr only errors. */
  readonly quiet: boolean;
  /** `--allow-empty`: -f input without any resource ingress2nginx reads is accepted. */
  readonly allowEmpty: boolean;
  /** `X.Y.Z`, `auto` (read from the nginx binary), or unset: `auto` with `--check`, else `defaults.nginxVersion`. */
  readonly nginxVersion?: string;
  /** Unset: the nginx binary's with `auto`, else `defaults.streamModule`. */
  readonly streamModule?: string;
  readonly now?: Date;
}

export const defaults = {
  ingressClass: 'nginx',
  gatewayClass: 'ingress2nginx',
  /** Debian's and Ubuntu's ca-certificates bundle. */
  systemCaBundle: '/etc/ssl/certs/ca-certificates.crt',
  clusterDomain: 'cluster.local',
  httpPort: 80,
  httpsPort: 443,
  /** `run`'s resolver for endpoints, and nginx's 503 server it points Services without endpoints at: both on loopback. */
  endpointResolverPort: 10053,
  unavailablePort: 10054,
  runDir: '/tmp/ingress2nginx',
  /** Fixed, not detected, so the same manifests give the same bytes on every machine. */
  nginxVersion: '1.22.1',
  /** Where Debian and Ubuntu's libnginx-mod-stream puts the module. */
  streamModule: '/usr/lib/nginx/modules/ngx_stream_module.so',
} as const;

export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 1 || port > 65535) throw new InvalidArgumentError('expected a port number 1-65535');
  return port;
}

export function parseEndpointResolver(value: string): number | 'off' {
  return value === 'off' ? 'off' : parsePort(value);
}

export function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < 1 || seconds > 3600) throw new InvalidArgumentError('expected whole seconds 1-3600');
  return seconds;
}

/** Absolute, plain characters, short enough that socket paths under it fit the 107-byte limit. */
export function parseRunDir(value: string): string {
  const trimmed = value.replace(/\/+$/, '');
  if (!isAbsolute(trimmed) || !/^\/[A-Za-z0-9._/-]*$/.test(trimmed) || trimmed.length > 64) {
    throw new InvalidArgumentError('expected an absolute path of at most 64 characters from A-Z a-z 0-9 . _ - /');
  }
  return trimmed;
}

export function parseNamespacedName(value: string): string {
  const [namespace, name, extra] = value.split('/');
  if (extra !== undefined || !namespace || !name || !isKubernetesName(namespace) || !isKubernetesName(name)) {
    throw new InvalidArgumentError('expected namespace/name');
  }
  return value;
}

/**
 * A DNS server for nginx's `resolver`: `IP`, `IP:port`, `[IPv6]:port` (a bare IPv6 address is put in
 * brackets), or `auto` (the nameservers of /etc/resolv.conf, read where the flags are turned into options).
 */
export function parseResolver(value: string, previous: string[] | undefined): string[] {
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?$/.exec(value);
  const ipv4 = /^([0-9.]+)(?::(\d{1,5}))?$/.exec(value);
  let address: string | undefined;
  let port: string | undefined;
  if (value === 'auto') return [...(previous ?? []), value];
  if (bracketed) [, address, port] = bracketed;
  else if (ipv4) [, address, port] = ipv4;
  else address = value;
  if (address === undefined || !isIpAddress(address) || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
    throw new InvalidArgumentError('expected an IP address with an optional port (10.96.0.10, 10.96.0.10:53, [fd00::10]:53) or "auto"');
  }
  const host = isIP(address) === 6 ? `[${address}]` : address;
  return [...(previous ?? []), port === undefined ? host : `${host}:${port}`];
}

/** `nameserver` lines of a resolv.conf, as resolver addresses. */
export function nameservers(resolvConf: string): string[] {
  return [...resolvConf.matchAll(/^\s*nameserver\s+(\S+)/gm)]
    .map((m) => (m[1] ?? '').replace(/%.*$/, ''))
    .filter((address) => isIpAddress(address))
    .map((address) => (isIP(address) === 6 ? `[${address}]` : address));
}

/** `host:port` or `[ipv6]:port` to listen on. */
export function parseListenAddress(value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([0-9.]+|[a-z0-9.-]+)):(\d{1,5})$/.exec(value);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!match || host === undefined || port < 0 || port > 65535) throw new InvalidArgumentError('expected host:port, such as 0.0.0.0:10254');
  return { host, port };
}

/** `--gateway namespace/name`, repeatable. */
export function collectNamespacedName(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), parseNamespacedName(value)];
}

export function collectNamespace(value: string, previous: string[] | undefined): string[] {
  if (!isKubernetesName(value)) throw new InvalidArgumentError('expected a namespace name');
  return [...(previous ?? []), value];
}

/** `key=value,key=value`: labels a Namespace must all carry (a label selector of equalities). */
export function parseLabelSelector(value: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of value.split(',')) {
    const match = /^((?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)=([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/.exec(pair.trim());
    if (!match?.[1]) throw new InvalidArgumentError('expected key=value pairs separated by commas, such as team=platform,snippets=allowed');
    labels[match[1]] = match[4] ?? '';
  }
  return labels;
}

export function parseDomainList(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), parseDomain(value.replace(/^\*?\./, ''))];
}

export function parseDomain(value: string): string {
  if (!isDnsHostname(value)) throw new InvalidArgumentError('expected a DNS domain such as cluster.local');
  return value;
}

export function parseVersion(value: string): string {
  if (value !== 'auto' && !/^\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(value)) throw new InvalidArgumentError('expected a version such as 1.22.1, or "auto"');
  return value;
}

/** The nginx a render targets: its version (which picks the topology) and its stream module. */
export interface NginxTarget {
  readonly nginxVersion: string;
  readonly streamModulePath?: string;
}

/**
 * `--nginx-version` and `--stream-module` as given, else as `detected` (the nginx binary's own, read
 * only when `auto` is asked for or implied by `--check`), else the fixed defaults that keep CI renders
 * the same on every machine.
 */
export async function nginxTarget(
  flags: Pick<CommonFlags, 'nginxVersion' | 'streamModule'>,
  check: boolean,
  detected: () => Promise<{ version: string; streamModulePath?: string }>,
): Promise<NginxTarget> {
  const version = flags.nginxVersion ?? (check ? 'auto' : defaults.nginxVersion);
  const build = version === 'auto' ? await detected() : undefined;
  const streamModule = flags.streamModule ?? (build ? (build.streamModulePath ?? 'none') : defaults.streamModule);
  return { nginxVersion: build?.version ?? version, ...(streamModule !== 'none' && { streamModulePath: streamModule }) };
}

export function parseStreamModule(value: string): string {
  if (value !== 'none' && !/^\/[A-Za-z0-9._/-]+\.so$/.test(value)) {
    throw new InvalidArgumentError('expected an absolute path to ngx_stream_module.so, or "none"');
  }
  return value;
}

export function parseAbsoluteFile(value: string): string {
  if (!/^\/[A-Za-z0-9._/-]+$/.test(value)) throw new InvalidArgumentError('expected an absolute path');
  return value;
}

export function parseAccessLog(value: string): string {
  if (value !== 'off' && !/^\/[A-Za-z0-9._/-]+$/.test(value)) {
    throw new InvalidArgumentError('expected an absolute path (such as /dev/stdout) or "off"');
  }
  return value;
}

export function parseNow(value: string): Date {
  const date = new Date(value);
  if (!rfc3339.test(value) || Number.isNaN(date.getTime())) {
    throw new InvalidArgumentError('expected an RFC 3339 time with a zone, such as 2026-01-31T00:00:00Z');
  }
  return date;
}

export function parseClassName(value: string): string {
  if (!isKubernetesName(value)) throw new InvalidArgumentError('expected a class name (lowercase DNS-1123)');
  return value;
}

/** `--resolver auto` stands for the machine's nameservers; `resolvConf` is only called when it is used. */
export function toBaseTranslateOptions(flags: TranslateFlags, resolvConf: () => string = () => ''): BaseTranslateOptions {
  if (flags.httpPort === flags.httpsPort) throw new UsageError(`--http-port and --https-port must differ (both are ${flags.httpPort})`);
  return {
    ingressClass: flags.ingressClass,
    gatewayClass: flags.gatewayClass,
    ...(flags.gateway && { gateways: [...new Set(flags.gateway)].sort() }),
    systemCaBundle: flags.systemCaBundle,
    watchIngressWithoutClass: flags.watchIngressWithoutClass,
    ...(flags.configmap !== undefined && { configMap: flags.configmap }),
    ...(flags.tcpServicesConfigmap !== undefined && { tcpServicesConfigMap: flags.tcpServicesConfigmap }),
    ...(flags.udpServicesConfigmap !== undefined && { udpServicesConfigMap: flags.udpServicesConfigmap }),
    snippets: {
      allow: flags.allowSnippetAnnotations,
      ...(flags.snippetNamespace && { namespaces: flags.snippetNamespace }),
      ...(flags.snippetNamespaceSelector && { namespaceSelector: flags.snippetNamespaceSelector }),
    },
    ...(flags.defaultCertificate !== undefined && { defaultCertificate: flags.defaultCertificate }),
    ...(flags.defaultBackendService !== undefined && { defaultBackendService: flags.defaultBackendService }),
    allowCrossNamespaceSecrets: flags.allowCrossNamespaceSecrets,
    allowCrossNamespaceAuthUrl: flags.allowCrossNamespaceAuthUrl ?? false,
    clusterDomain: flags.clusterDomain,
    ...(flags.resolver && { resolvers: resolverAddresses(flags.resolver, resolvConf) }),
    disableExternalName: flags.disableSvcExternalName,
    ...(flags.externalNameSuffix && { externalNameSuffixes: flags.externalNameSuffix }),
    firstNamespaceOwnsHost: flags.firstNamespaceOwnsHost,
    upstreams: flags.upstreams,
    ...endpointResolver(flags),
    httpPort: flags.httpPort,
    httpsPort: flags.httpsPort,
    runDir: flags.runDir,
    accessLog: flags.accessLog,
    certificatesPerHandshake: flags.certificatesPerHandshake,
  };
}

/**
 * The options of a command that reads manifests from files: manifests as kept in git, where what the
 * cluster provides at apply time is expected to be missing, unless `--strict` asks for everything.
 */
export function toTranslateOptions(flags: CommonFlags, target: NginxTarget, now: Date, resolvConf: () => string = () => ''): TranslateOptions {
  return { ...toBaseTranslateOptions(flags, resolvConf), ...target, now: flags.now ?? now, expectClusterProvided: !flags.strict };
}

/** `--endpoint-resolver`: only with `--upstreams endpoints`, and on a port of its own. */
function endpointResolver(flags: TranslateFlags): Pick<BaseTranslateOptions, 'endpointResolver'> {
  const port = flags.endpointResolver;
  if (port === undefined || port === 'off') return {};
  if (flags.upstreams !== 'endpoints') throw new UsageError('--endpoint-resolver needs --upstreams endpoints: with cluster IPs there is nothing to resolve');
  const taken = [flags.httpPort, flags.httpsPort, flags.unavailablePort];
  if (taken.includes(port)) throw new UsageError(`--endpoint-resolver ${port} is also the --http-port, --https-port or --unavailable-port`);
  if (flags.unavailablePort === flags.httpPort || flags.unavailablePort === flags.httpsPort) {
    throw new UsageError(`--unavailable-port ${flags.unavailablePort} is also the --http-port or --https-port`);
  }
  return { endpointResolver: { address: `127.0.0.1:${port}`, noEndpointsPort: flags.unavailablePort } };
}

function resolverAddresses(given: readonly string[], resolvConf: () => string): string[] {
  const addresses = given.flatMap((address) => (address === 'auto' ? nameservers(resolvConf()) : [address]));
  if (addresses.length === 0) throw new UsageError('--resolver auto found no nameserver in /etc/resolv.conf; give the address instead');
  return [...new Set(addresses)];
}
