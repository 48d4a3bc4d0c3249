/**
 * Controller-wide settings from the ConfigMap's `data`, with ingress-nginx's key names and defaults
 * where the meaning is the same. Never throws: a rejected value becomes an issue plus the default.
 */
import { z } from 'zod';
import type { Severity } from '../../model/diagnostics.js';
import type { RedirectCode } from '../../model/nginx.js';
import {
  cidrList,
  cidrListText,
  headerNameList,
  headerNameListText,
  cipherListDescription,
  describeRejectedValue,
  goBool,
  goBoolText,
  integerInRange,
  isCipherList,
  nginxSize,
  onOrOff,
  parseSslProtocols,
  quoteKey,
} from '../checks/allowlist.js';
import { busySizeFits, busySizeRange } from './busy-buffers.js';
import { maxBodyBufferBytes, maxProxyBufferBytes, maxProxyBuffersTotalBytes, minProxyBufferBytes, maxTimeoutSeconds, minProxyBuffers, nextUpstream, nextUpstreamText } from './annotations/proxy.js';
import { directiveSlices, httpDirectiveSlices } from './annotations/directive-slices.js';
import { namespacedName, type NamespacedName } from './annotations/references.js';
import { logFormat, logFormatText } from './log-format.js';
import { defaultGzipTypes, gzipDisable, gzipDisableText, gzipTypes, gzipTypesText } from './gzip.js';
import { externalAuthAnnotations } from './annotations/external-auth.js';
import { errorAnnotations } from './annotations/errors.js';
import type { AnnotationRule, ValuesOf } from './annotations/rule.js';
import { isSnippetKey, snippetRefusedReason } from './annotations/snippets.js';
import { compareStrings } from '../../model/order.js';

/** The settings of the key table below, one field per ConfigMap key. */
interface TableSettings {
  sslProtocols: string;
  sslCiphers: string;
  sslRedirect: boolean;
  hsts: boolean;
  hstsMaxAge: number;
  hstsIncludeSubdomains: boolean;
  hstsPreload: boolean;
  useForwardedHeaders: boolean;
  proxyRealIpCidr: string[];
  useProxyProtocol: boolean;
  sslRejectHandshake: boolean;
  upstreamKeepaliveConnections: number;
  workerProcesses: string;
  maxWorkerConnections: number;
  firstNamespaceOwnsHost: boolean;
  allowSnippetAnnotations: boolean;
  /** Undefined when the ConfigMap does not set it: snippets.ts gives the default, which depends on what allows snippets. */
  annotationsRiskLevel: 'Low' | 'Medium' | 'High' | 'Critical' | undefined;
  httpRedirectCode: RedirectCode;
  computeFullForwardedFor: boolean;
  generateRequestId: boolean;
  logFormatEscapeJson: boolean;
  proxyBodySize: string;
  clientBodyBufferSize: string;
  proxyConnectTimeout: number;
  proxyReadTimeout: number;
  proxySendTimeout: number;
  proxyBuffering: boolean;
  proxyBufferSize: string;
  proxyBuffersNumber: number;
  proxyRequestBuffering: boolean;
  proxyHttpVersion: '1.0' | '1.1';
  proxyNextUpstream: string;
  proxyNextUpstreamTries: number;
  proxyNextUpstreamTimeout: number;
  whitelistSourceRange: string[];
  denylistSourceRange: string[];
  limitReqStatusCode: number;
  limitConnStatusCode: number;
  addHeaders: NamespacedName | undefined;
  proxySetHeaders: NamespacedName | undefined;
  hideHeaders: string[];
  globalAllowedResponseHeaders: string[];
  keepAlive: number;
  useGzip: boolean;
  gzipLevel: number;
  gzipMinLength: number;
  gzipTypes: string;
  gzipDisable: string | undefined;
  /** Checked against the ConfigMap's buffers (nginx refuses one that does not fit); undefined: nginx's default. */
  proxyBusyBuffersSize: string | undefined;
  logFormatUpstream: string | undefined;
  /** Answered by `--default-backend-service` (translate/default-backend.ts). */
  customHttpErrors: readonly number[];
}

/** The directive slices' values (annotations/directive-slices.ts), under their keys: undefined keeps nginx's default. */
type SliceSettings = { [key: `${string}-${string}`]: string | undefined };

/** `global-auth-*`: the values of the `auth-*` annotations, for every Ingress without its own `auth-url`. */
export type GlobalAuthSettings = Omit<ValuesOf<typeof externalAuthAnnotations>, 'enableGlobalAuth'>;

export type ControllerSettings = TableSettings &
  SliceSettings & {
    readonly globalAuth?: GlobalAuthSettings;
    /** `global-auth-url` is set and rejected: the Ingresses it would guard answer 503, never open. */
    readonly globalAuthUnusable?: true;
  };

export interface ConfigMapIssue {
  severity: Severity;
  code: string;
  key: string;
  message: string;
}

interface SettingRule<T> {
  /** ConfigMap key, e.g. `ssl-protocols`. */
  readonly key: string;
  readonly schema: z.ZodType<T>;
  readonly defaultValue: T;
  /** What the schema accepts, in words, for the message that rejects a value. */
  readonly accepted: string;
}

type SettingTable = { readonly [Field in keyof TableSettings]: SettingRule<TableSettings[Field]> };

/**
 * SSLv2 and SSLv3 are refused outright (OpenSSL 3 builds lack them); TLSv1 and TLSv1.1 stay available
 * for the legacy clients ingress-nginx documents a setting for.
 */
const serverSslProtocolsAllowed = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;

const sslProtocols = z.string().transform((value, context) => {
  const parsed = parseSslProtocols(value, serverSslProtocolsAllowed);
  if (!parsed.ok) {
    context.addIssue({ code: 'custom', message: parsed.problem });
    return z.NEVER;
  }
  return parsed.value;
});

const workerProcesses = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.union([z.literal('auto'), integerInRange(1, 1024).transform(String)]));

const trueOrFalseText = goBoolText;
const trueOrFalse = goBool;
const seconds = integerInRange(0, maxTimeoutSeconds);
const secondsText = `a number of seconds from 0 to ${maxTimeoutSeconds}`;
const errorStatus = integerInRange(400, 599);
/** `namespace/name` of a ConfigMap, or empty for none (as ingress-nginx reads an empty value). */
const optionalReference = z.union([z.literal('').transform(() => undefined), namespacedName]);
/** The slices' ConfigMap keys: the annotations' defaults, and the http-level ones. */
const allSlices = [...directiveSlices, ...httpDirectiveSlices];

// Defaults verified against ingress-nginx's internal/ingress/controller/config/config.go (NewDefault).
const settingTable: SettingTable = {
  // ingress-nginx: sslProtocols = "TLSv1.2 TLSv1.3".
  sslProtocols: {
    key: 'ssl-protocols',
    schema: sslProtocols,
    defaultValue: 'TLSv1.2 TLSv1.3',
    accepted: `a space-separated list of ${serverSslProtocolsAllowed.join(', ')}`,
  },
  // ingress-nginx: sslCiphers, ECDHE (and two DHE) AEAD suites; TLSv1.3 suites are not set by ssl_ciphers.
  sslCiphers: {
    key: 'ssl-ciphers',
    schema: z.string().trim().refine(isCipherList),
    defaultValue:
      'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:' +
      'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:' +
      'DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384',
    accepted: cipherListDescription,
  },
  // ingress-nginx: SSLRedirect true (defaults.Backend).
  sslRedirect: { key: 'ssl-redirect', schema: trueOrFalse, defaultValue: true, accepted: trueOrFalseText },
  // ingress-nginx: HSTS true.
  hsts: { key: 'hsts', schema: trueOrFalse, defaultValue: true, accepted: trueOrFalseText },
  // ingress-nginx: hstsMaxAge = "31536000" (one year; its docs table still says 15724800, the code wins).
  // The upper bound is 2^31 - 1 seconds, some 68 years: anything larger is a typo.
  hstsMaxAge: {
    key: 'hsts-max-age',
    schema: integerInRange(0, 2_147_483_647),
    defaultValue: 31_536_000,
    accepted: 'a number of seconds from 0 to 2147483647',
  },
  // ingress-nginx: HSTSIncludeSubdomains true.
  hstsIncludeSubdomains: {
    key: 'hsts-include-subdomains',
    schema: trueOrFalse,
    defaultValue: true,
    accepted: trueOrFalseText,
  },
  // ingress-nginx: HSTSPreload false.
  hstsPreload: { key: 'hsts-preload', schema: trueOrFalse, defaultValue: false, accepted: trueOrFalseText },
  // ingress-nginx: UseForwardedHeaders false.
  useForwardedHeaders: {
    key: 'use-forwarded-headers',
    schema: trueOrFalse,
    defaultValue: false,
    accepted: trueOrFalseText,
  },
  // ingress-nginx: ProxyRealIPCIDR ["0.0.0.0/0"], i.e. trust forwarded headers from any IPv4 peer once
  // use-forwarded-headers or use-proxy-protocol is on.
  proxyRealIpCidr: {
    key: 'proxy-real-ip-cidr',
    schema: cidrList,
    defaultValue: ['0.0.0.0/0'],
    accepted: 'a comma-separated list of IP addresses or CIDRs',
  },
  // ingress-nginx: UseProxyProtocol not set in NewDefault, so Go's zero value false (docs: "false").
  useProxyProtocol: {
    key: 'use-proxy-protocol',
    schema: trueOrFalse,
    defaultValue: false,
    accepted: trueOrFalseText,
  },
  // ingress-nginx: SSLRejectHandshake false.
  sslRejectHandshake: {
    key: 'ssl-reject-handshake',
    schema: trueOrFalse,
    defaultValue: false,
    accepted: trueOrFalseText,
  },
  // ingress-nginx: UpstreamKeepaliveConnections 320; 0 turns upstream keepalive off, as there.
  upstreamKeepaliveConnections: {
    key: 'upstream-keepalive-connections',
    schema: integerInRange(0, 100_000),
    defaultValue: 320,
    accepted: 'an integer from 0 to 100000',
  },
  // ingress-nginx: the number of CPUs it sees at start-up; nginx's `auto` is the same thing, decided by
  // nginx on the machine that runs it rather than by us.
  workerProcesses: {
    key: 'worker-processes',
    schema: workerProcesses,
    defaultValue: 'auto',
    accepted: 'auto or an integer from 1 to 1024',
  },
  // ingress-nginx: MaxWorkerConnections 16384. Its 0 ("derive from the open-files limit") needs the
  // runtime environment, so we reject it.
  maxWorkerConnections: {
    key: 'max-worker-connections',
    schema: integerInRange(1, 1_048_576),
    defaultValue: 16_384,
    accepted: 'an integer from 1 to 1048576',
  },
  // Ours (ingress-nginx has no such rule): a host belongs to the namespace that claimed it first.
  firstNamespaceOwnsHost: {
    key: 'first-namespace-owns-host',
    schema: trueOrFalse,
    defaultValue: false,
    accepted: trueOrFalseText,
  },
  // ingress-nginx: AllowSnippetAnnotations false. Read with the scope flags in snippets.ts.
  allowSnippetAnnotations: {
    key: 'allow-snippet-annotations',
    schema: trueOrFalse,
    defaultValue: false,
    accepted: trueOrFalseText,
  },
  // ingress-nginx: AnnotationsRiskLevel High (1.12+), which refuses snippets (Critical). Unset, snippets.ts
  // applies High where this ConfigMap's allow-snippet-annotations allows them, Critical where our flag does.
  annotationsRiskLevel: {
    key: 'annotations-risk-level',
    schema: z.string().trim().pipe(z.enum(['Low', 'Medium', 'High', 'Critical'])),
    defaultValue: undefined,
    accepted: 'Low, Medium, High or Critical',
  },
  // ingress-nginx: HTTPRedirectCode 308; it accepts 301, 302, 307 and 308.
  httpRedirectCode: {
    key: 'http-redirect-code',
    schema: z
      .string()
      .trim()
      .pipe(z.enum(['301', '302', '307', '308']))
      .transform((code) => Number(code) as RedirectCode),
    defaultValue: 308,
    accepted: '301, 302, 307 or 308',
  },
  // ingress-nginx: ComputeFullForwardedFor false.
  computeFullForwardedFor: { key: 'compute-full-forwarded-for', schema: trueOrFalse, defaultValue: false, accepted: trueOrFalseText },
  // ingress-nginx: GenerateRequestID true.
  generateRequestId: { key: 'generate-request-id', schema: trueOrFalse, defaultValue: true, accepted: trueOrFalseText },
  // ingress-nginx: LogFormatEscapeJSON false.
  logFormatEscapeJson: { key: 'log-format-escape-json', schema: trueOrFalse, defaultValue: false, accepted: trueOrFalseText },
  // ingress-nginx's defaults.Backend: ProxyBodySize "1m", ClientBodyBufferSize "8k" (top level), ProxyConnectTimeout 5,
  // ProxyReadTimeout 60, ProxySendTimeout 60, ProxyBuffering "off", ProxyBufferSize "4k", ProxyBuffersNumber 4,
  // ProxyRequestBuffering "on", ProxyHTTPVersion "1.1", ProxyNextUpstream "error timeout", ProxyNextUpstreamTries 3,
  // ProxyNextUpstreamTimeout 0.
  proxyBodySize: { key: 'proxy-body-size', schema: nginxSize('kmg'), defaultValue: '1m', accepted: 'a size such as 0 (unlimited), 512k, 8m or 1g' },
  clientBodyBufferSize: {
    key: 'client-body-buffer-size',
    schema: nginxSize('km', maxBodyBufferBytes),
    defaultValue: '8k',
    accepted: 'a size such as 16k, at most 16m',
  },
  proxyConnectTimeout: { key: 'proxy-connect-timeout', schema: seconds, defaultValue: 5, accepted: secondsText },
  proxyReadTimeout: { key: 'proxy-read-timeout', schema: seconds, defaultValue: 60, accepted: secondsText },
  proxySendTimeout: { key: 'proxy-send-timeout', schema: seconds, defaultValue: 60, accepted: secondsText },
  proxyBuffering: { key: 'proxy-buffering', schema: onOrOff, defaultValue: false, accepted: 'on or off' },
  proxyBufferSize: {
    key: 'proxy-buffer-size',
    schema: nginxSize('km', maxProxyBufferBytes, minProxyBufferBytes),
    defaultValue: '4k',
    accepted: 'a size such as 4k, from 1k to 1m',
  },
  proxyBuffersNumber: {
    key: 'proxy-buffers-number',
    schema: integerInRange(minProxyBuffers, 1024),
    defaultValue: 4,
    accepted: `an integer from ${minProxyBuffers} to 1024`,
  },
  proxyRequestBuffering: { key: 'proxy-request-buffering', schema: onOrOff, defaultValue: true, accepted: 'on or off' },
  proxyHttpVersion: {
    key: 'proxy-http-version',
    schema: z.string().trim().pipe(z.enum(['1.0', '1.1'])),
    defaultValue: '1.1',
    accepted: '1.0 or 1.1',
  },
  proxyNextUpstream: { key: 'proxy-next-upstream', schema: nextUpstream, defaultValue: 'error timeout', accepted: nextUpstreamText },
  proxyNextUpstreamTries: { key: 'proxy-next-upstream-tries', schema: integerInRange(0, 100), defaultValue: 3, accepted: 'an integer from 0 to 100' },
  proxyNextUpstreamTimeout: { key: 'proxy-next-upstream-timeout', schema: seconds, defaultValue: 0, accepted: secondsText },
  // ingress-nginx: WhitelistSourceRange and DenylistSourceRange empty: every address.
  whitelistSourceRange: { key: 'whitelist-source-range', schema: cidrList, defaultValue: [], accepted: cidrListText },
  denylistSourceRange: { key: 'denylist-source-range', schema: cidrList, defaultValue: [], accepted: cidrListText },
  // ingress-nginx: LimitReqStatusCode 503, LimitConnStatusCode 503.
  limitReqStatusCode: { key: 'limit-req-status-code', schema: errorStatus, defaultValue: 503, accepted: 'a status code from 400 to 599' },
  limitConnStatusCode: { key: 'limit-conn-status-code', schema: errorStatus, defaultValue: 503, accepted: 'a status code from 400 to 599' },
  // ingress-nginx: AddHeaders and ProxySetHeaders name ConfigMaps (namespace/name) of header → value; empty by default.
  addHeaders: { key: 'add-headers', schema: optionalReference, defaultValue: undefined, accepted: 'namespace/name of a ConfigMap' },
  proxySetHeaders: { key: 'proxy-set-headers', schema: optionalReference, defaultValue: undefined, accepted: 'namespace/name of a ConfigMap' },
  // ingress-nginx: HideHeaders and AllowedResponseHeaders (global-allowed-response-headers) empty.
  hideHeaders: { key: 'hide-headers', schema: headerNameList, defaultValue: [], accepted: headerNameListText },
  globalAllowedResponseHeaders: { key: 'global-allowed-response-headers', schema: headerNameList, defaultValue: [], accepted: headerNameListText },
  // ingress-nginx: KeepAlive 75 (keepalive_timeout, seconds; 0 turns client keep-alive off).
  keepAlive: { key: 'keep-alive', schema: integerInRange(0, 3600), defaultValue: 75, accepted: 'a number of seconds from 0 to 3600' },
  // ingress-nginx: UseGzip false, GzipLevel 1, GzipMinLength 256, GzipTypes its list (gzip.ts), GzipDisable empty.
  useGzip: { key: 'use-gzip', schema: trueOrFalse, defaultValue: false, accepted: trueOrFalseText },
  gzipLevel: { key: 'gzip-level', schema: integerInRange(1, 9), defaultValue: 1, accepted: 'an integer from 1 to 9' },
  gzipMinLength: { key: 'gzip-min-length', schema: integerInRange(0, 1_073_741_824), defaultValue: 256, accepted: 'a number of bytes' },
  gzipTypes: { key: 'gzip-types', schema: gzipTypes, defaultValue: defaultGzipTypes, accepted: gzipTypesText },
  gzipDisable: { key: 'gzip-disable', schema: gzipDisable, defaultValue: undefined, accepted: gzipDisableText },
  proxyBusyBuffersSize: {
    key: 'proxy-busy-buffers-size',
    schema: nginxSize('km', maxProxyBuffersTotalBytes, minProxyBufferBytes),
    defaultValue: undefined,
    accepted: 'a size such as 16k: at least one buffer and less than all of them (proxy-buffer-size and proxy-buffers-number)',
  },
  // ingress-nginx: LogFormatUpstream its upstreaminfo format (requestLog.hbs renders it while this is unset).
  logFormatUpstream: { key: 'log-format-upstream', schema: logFormat, defaultValue: undefined, accepted: logFormatText },
  // ingress-nginx: CustomHTTPErrors empty; the same codes as the annotation of that name.
  customHttpErrors: { key: 'custom-http-errors', schema: errorAnnotations.customHttpErrors.schema, defaultValue: [], accepted: errorAnnotations.customHttpErrors.accepted },
};

/** ingress-nginx names the global auth keys after the annotations: `global-` + `auth-url`, and so on. */
const globalAuthRules: readonly (readonly [string, AnnotationRule<unknown>])[] = Object.entries(externalAuthAnnotations).filter(([field]) => field !== 'enableGlobalAuth');
const globalKey = (rule: AnnotationRule<unknown>) => `global-${rule.name}`;
/** The `global-auth-*` keys the parser reads into `globalAuth`. */
export const globalAuthKeys: readonly string[] = globalAuthRules.map(([, rule]) => globalKey(rule));

const knownKeys: ReadonlySet<string> = new Set([
  ...Object.values(settingTable).map((rule) => rule.key),
  ...allSlices.map((slice) => slice.name),
  ...globalAuthKeys,
]);

/** Builds settings field by field; `pick` supplies each field's value. */
function assembleSettings(
  pick: <Field extends keyof TableSettings>(field: Field) => TableSettings[Field],
  slices: SliceSettings,
): ControllerSettings {
  return {
    sslProtocols: pick('sslProtocols'),
    sslCiphers: pick('sslCiphers'),
    sslRedirect: pick('sslRedirect'),
    hsts: pick('hsts'),
    hstsMaxAge: pick('hstsMaxAge'),
    hstsIncludeSubdomains: pick('hstsIncludeSubdomains'),
    hstsPreload: pick('hstsPreload'),
    useForwardedHeaders: pick('useForwardedHeaders'),
    proxyRealIpCidr: pick('proxyRealIpCidr'),
    useProxyProtocol: pick('useProxyProtocol'),
    sslRejectHandshake: pick('sslRejectHandshake'),
    upstreamKeepaliveConnections: pick('upstreamKeepaliveConnections'),
    workerProcesses: pick('workerProcesses'),
    maxWorkerConnections: pick('maxWorkerConnections'),
    firstNamespaceOwnsHost: pick('firstNamespaceOwnsHost'),
    allowSnippetAnnotations: pick('allowSnippetAnnotations'),
    annotationsRiskLevel: pick('annotationsRiskLevel'),
    httpRedirectCode: pick('httpRedirectCode'),
    computeFullForwardedFor: pick('computeFullForwardedFor'),
    generateRequestId: pick('generateRequestId'),
    logFormatEscapeJson: pick('logFormatEscapeJson'),
    proxyBodySize: pick('proxyBodySize'),
    clientBodyBufferSize: pick('clientBodyBufferSize'),
    proxyConnectTimeout: pick('proxyConnectTimeout'),
    proxyReadTimeout: pick('proxyReadTimeout'),
    proxySendTimeout: pick('proxySendTimeout'),
    proxyBuffering: pick('proxyBuffering'),
    proxyBufferSize: pick('proxyBufferSize'),
    proxyBuffersNumber: pick('proxyBuffersNumber'),
    proxyRequestBuffering: pick('proxyRequestBuffering'),
    proxyHttpVersion: pick('proxyHttpVersion'),
    proxyNextUpstream: pick('proxyNextUpstream'),
    proxyNextUpstreamTries: pick('proxyNextUpstreamTries'),
    proxyNextUpstreamTimeout: pick('proxyNextUpstreamTimeout'),
    whitelistSourceRange: pick('whitelistSourceRange'),
    denylistSourceRange: pick('denylistSourceRange'),
    limitReqStatusCode: pick('limitReqStatusCode'),
    limitConnStatusCode: pick('limitConnStatusCode'),
    addHeaders: pick('addHeaders'),
    proxySetHeaders: pick('proxySetHeaders'),
    hideHeaders: pick('hideHeaders'),
    globalAllowedResponseHeaders: pick('globalAllowedResponseHeaders'),
    keepAlive: pick('keepAlive'),
    useGzip: pick('useGzip'),
    gzipLevel: pick('gzipLevel'),
    gzipMinLength: pick('gzipMinLength'),
    gzipTypes: pick('gzipTypes'),
    gzipDisable: pick('gzipDisable'),
    proxyBusyBuffersSize: pick('proxyBusyBuffersSize'),
    logFormatUpstream: pick('logFormatUpstream'),
    customHttpErrors: pick('customHttpErrors'),
    ...slices,
  };
}

export const defaultControllerSettings: ControllerSettings = Object.freeze(
  assembleSettings(
    (field) => copyValue(settingTable[field].defaultValue),
    Object.fromEntries(allSlices.map((slice) => [slice.name, undefined])),
  ),
);

export function parseControllerSettings(data: Readonly<Record<string, string>>): {
  value: ControllerSettings;
  issues: ConfigMapIssue[];
} {
  const issues: ConfigMapIssue[] = [];
  for (const key of Object.keys(data)) {
    if (knownKeys.has(key)) continue;
    if (isSnippetKey(key)) {
      issues.push({
        severity: 'error',
        code: 'snippet-refused',
        key,
        message: `ConfigMap key ${quoteKey(key)} is refused. ${snippetRefusedReason}`,
      });
    } else {
      // ingress-nginx has hundreds of keys; most of them are tuning we leave to nginx's defaults.
      issues.push({
        severity: 'info',
        code: 'configmap-key-unsupported',
        key,
        message: `ConfigMap key ${quoteKey(key)} is not supported by ingress2nginx; it has no effect.`,
      });
    }
  }

  const slices: SliceSettings = Object.fromEntries(
    allSlices.map((slice) => [slice.name, readSetting({ key: slice.name, schema: slice.schema, defaultValue: undefined, accepted: slice.accepted }, data, issues)]),
  );
  const globalAuth = readGlobalAuth(data, issues);
  const value = {
    ...assembleSettings((field) => readSetting(settingTable[field], data, issues), slices),
    ...(globalAuth === 'unusable' ? { globalAuthUnusable: true as const } : globalAuth && { globalAuth }),
  };
  const buffers = { size: value.proxyBufferSize, number: value.proxyBuffersNumber };
  if (value.proxyBusyBuffersSize !== undefined && !busySizeFits(value.proxyBusyBuffersSize, buffers)) {
    issues.push({
      severity: 'error',
      code: 'configmap-invalid',
      key: 'proxy-busy-buffers-size',
      message: `ConfigMap key "proxy-busy-buffers-size" rejected: ${value.proxyBusyBuffersSize} is not ${busySizeRange(buffers)}, which nginx requires; nginx's default (two buffers) applies.`,
    });
    value.proxyBusyBuffersSize = undefined;
  }
  issues.sort((a, b) => compareStrings(a.key, b.key) || compareStrings(a.code, b.code));
  return { value, issues };
}

function readSetting<T>(rule: SettingRule<T>, data: Readonly<Record<string, string>>, issues: ConfigMapIssue[]): T {
  const raw = data[rule.key];
  if (raw === undefined) return copyValue(rule.defaultValue);
  const parsed = rule.schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  issues.push({
    severity: 'error',
    code: 'configmap-invalid',
    key: rule.key,
    message:
      `ConfigMap key ${quoteKey(rule.key)} rejected: ` +
      `the value ${describeRejectedValue(raw)}. Expected ${rule.accepted}.`,
  });
  return copyValue(rule.defaultValue);
}

/**
 * `global-auth-*`, read with the rules of the annotations they are named after; none without
 * `global-auth-url`. A rejected URL is an error and `unusable`: ingress-nginx then drops global auth,
 * which opens every Ingress it guarded; here they answer 503 instead.
 */
function readGlobalAuth(data: Readonly<Record<string, string>>, issues: ConfigMapIssue[]): GlobalAuthSettings | 'unusable' | undefined {
  // Empty is unset, as ingress-nginx reads it (charts write the key empty).
  if ((data[globalKey(externalAuthAnnotations.url)] ?? '').trim() === '') {
    for (const [, rule] of globalAuthRules) {
      if (data[globalKey(rule)] !== undefined) issues.push({ severity: 'warning', code: 'global-auth-url-missing', key: globalKey(rule), message: `ConfigMap key ${quoteKey(globalKey(rule))} does nothing without global-auth-url.` });
    }
    return undefined;
  }
  const values = Object.fromEntries(
    globalAuthRules.map(([field, rule]) => [field, readSetting({ key: globalKey(rule), schema: rule.schema, defaultValue: rule.defaultValue, accepted: rule.accepted }, data, issues)]),
  ) as GlobalAuthSettings;
  if (values.url !== undefined) return values;
  const rejected = issues.find((issue) => issue.key === globalKey(externalAuthAnnotations.url));
  if (rejected) rejected.message += ' The Ingresses it would guard answer 503 until this is fixed (never unguarded).';
  return 'unusable';
}

/** Gives each result its own copy of list defaults, so no caller can change the table's. */
function copyValue<T>(value: T): T {
  return Array.isArray(value) ? (value.slice() as T) : value;
}

/**
 * The `Strict-Transport-Security` value, or undefined when HSTS is off. It contains `;`, so the
 * renderer quotes it; every part of it is a number or a fixed word.
 */
export function hstsHeaderValue(settings: ControllerSettings): string | undefined {
  if (!settings.hsts) return undefined;
  let value = `max-age=${settings.hstsMaxAge}`;
  if (settings.hstsIncludeSubdomains) value += '; includeSubDomains';
  if (settings.hstsPreload) value += '; preload';
  return value;
}
