/**
 * Controller-wide settings from the ConfigMap's `data`, with ingress-nginx's key names and defaults
 * where the meaning is the same. Never throws: a rejected value becomes an issue plus the default.
 */
import { z } from 'zod';
import type { Severity } from '../../model/diagnostics.js';
import {
  cipherListDescription,
  describeRejectedValue,
  integerInRange,
  isCidr,
  isCipherList,
  parseSslProtocols,
  quoteKey,
  trueOrFalse,
} from '../allowlist.js';
import { isSnippetKey, snippetRefusedReason } from './annotations/snippets.js';
import { compareStrings } from '../../model/order.js';

export interface ControllerSettings {
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
}

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

type SettingTable = { readonly [Field in keyof ControllerSettings]: SettingRule<ControllerSettings[Field]> };

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

/** Comma-separated addresses or CIDRs; empty items (a trailing comma) are skipped, duplicates dropped. */
const cidrList = z.string().transform((value, context) => {
  const items = [...new Set(value.split(',').map((item) => item.trim()).filter((item) => item !== ''))];
  if (items.length === 0 || !items.every(isCidr)) {
    context.addIssue({ code: 'custom', message: 'expected a comma-separated list of IP addresses or CIDRs' });
    return z.NEVER;
  }
  return items;
});

const workerProcesses = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.union([z.literal('auto'), integerInRange(1, 1024).transform(String)]));

const trueOrFalseText = 'true or false';

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
};

const knownKeys: ReadonlySet<string> = new Set(Object.values(settingTable).map((rule) => rule.key));

/** Builds settings field by field; `pick` supplies each field's value. */
function assembleSettings(
  pick: <Field extends keyof ControllerSettings>(field: Field) => ControllerSettings[Field],
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
  };
}

export const defaultControllerSettings: ControllerSettings = Object.freeze(
  assembleSettings((field) => copyValue(settingTable[field].defaultValue)),
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

  const value = assembleSettings((field) => readSetting(settingTable[field], data, issues));
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
