/**
 * Reads the ingress-nginx annotations of one Ingress into checked values. Never throws: a rejected
 * value becomes an issue plus the field's default, and the translator decides how to degrade.
 */
import type { Severity } from '../../../model/diagnostics.js';
import { describeRejectedValue, quoteKey } from '../../allowlist.js';
import { backendProtocolAnnotations, type BackendProtocolName } from './backend-protocol.js';
import { proxySslAnnotations, type NamespacedName } from './proxy-ssl.js';
import { annotationPrefix, type AnnotationRule } from './rule.js';
import { isSnippetKey, snippetRefusedReason } from './snippets.js';
import { canaryAnnotations } from './canary.js';
import { sslPassthroughAnnotations } from './ssl-passthrough.js';
import { sslRedirectAnnotations } from './ssl-redirect.js';
import { isAccessControlAnnotation, isUnsupportedAnnotation } from './unsupported.js';
import { compareStrings } from '../../../model/order.js';

export { annotationPrefix } from './rule.js';
export { backendProtocolNames, type BackendProtocolName } from './backend-protocol.js';
export type { NamespacedName } from './proxy-ssl.js';

export interface AnnotationIssue {
  severity: Severity;
  code: string;
  /** Full annotation key, prefix included. */
  annotation: string;
  message: string;
}

export interface IngressAnnotations {
  canary: boolean;
  sslPassthrough: boolean;
  /** undefined = not set (the ConfigMap's `ssl-redirect` applies). */
  sslRedirect?: boolean;
  forceSslRedirect: boolean;
  backendProtocol: BackendProtocolName;
  proxySsl: {
    secret?: NamespacedName;
    verify: boolean;
    verifyDepth: number;
    name?: string;
    serverName: boolean;
    protocols: string;
    ciphers: string;
  };
  /**
   * Full keys of annotations present that act on HTTP traffic (everything in our prefix except
   * ssl-passthrough) — the translator warns that they are ignored for passthrough hosts.
   */
  httpLevelAnnotations: string[];
}

/** One field per annotation we implement; `IngressAnnotations` groups them. */
interface AnnotationValues {
  canary: boolean;
  sslPassthrough: boolean;
  sslRedirect: boolean | undefined;
  forceSslRedirect: boolean;
  backendProtocol: BackendProtocolName;
  proxySslSecret: NamespacedName | undefined;
  proxySslVerify: boolean;
  proxySslVerifyDepth: number;
  proxySslName: string | undefined;
  proxySslServerName: boolean;
  proxySslProtocols: string;
  proxySslCiphers: string;
}

type AnnotationTable = { readonly [Field in keyof AnnotationValues]: AnnotationRule<AnnotationValues[Field]> };

/** Every annotation we implement, assembled from the family files; the compiler checks it is complete. */
const annotationTable: AnnotationTable = {
  ...canaryAnnotations,
  ...sslPassthroughAnnotations,
  ...sslRedirectAnnotations,
  ...backendProtocolAnnotations,
  ...proxySslAnnotations,
};

const implementedNames: ReadonlySet<string> = new Set(Object.values(annotationTable).map((rule) => rule.name));

export function parseIngressAnnotations(annotations: Readonly<Record<string, string>>): {
  value: IngressAnnotations;
  issues: AnnotationIssue[];
} {
  const issues: AnnotationIssue[] = [];
  const ours = Object.keys(annotations)
    .filter((key) => key.startsWith(annotationPrefix))
    .sort(compareStrings);

  for (const key of ours) {
    const name = key.slice(annotationPrefix.length);
    if (implementedNames.has(name)) continue;
    if (isSnippetKey(name)) {
      issues.push({
        severity: 'error',
        code: 'snippet-refused',
        annotation: key,
        message: `${quoteKey(key)} is refused. ${snippetRefusedReason}`,
      });
    } else if (isAccessControlAnnotation(name)) {
      issues.push({
        severity: 'error',
        code: 'annotation-access-control-unsupported',
        annotation: key,
        message: `${quoteKey(key)} restricts access, and ingress2nginx does not implement it; rendering the Ingress without it would open the backend to everyone, so the Ingress is not rendered. Protect the backend another way (e.g. in the application or a NetworkPolicy) and remove the annotation.`,
      });
    } else if (isUnsupportedAnnotation(name)) {
      issues.push({
        severity: 'warning',
        code: 'annotation-unsupported',
        annotation: key,
        message: `${quoteKey(key)} is an ingress-nginx annotation that ingress2nginx does not implement; ignored.`,
      });
    } else {
      issues.push({
        severity: 'warning',
        code: 'annotation-unknown',
        annotation: key,
        message: `${quoteKey(key)} is not an ingress-nginx annotation known to ingress2nginx (a typo?); it is ignored.`,
      });
    }
  }

  const read = <Field extends keyof AnnotationValues>(field: Field): AnnotationValues[Field] =>
    readAnnotation(annotationTable[field], annotations, issues);

  const value: IngressAnnotations = {
    canary: read('canary'),
    sslPassthrough: read('sslPassthrough'),
    sslRedirect: read('sslRedirect'),
    forceSslRedirect: read('forceSslRedirect'),
    backendProtocol: read('backendProtocol'),
    proxySsl: {
      secret: read('proxySslSecret'),
      verify: read('proxySslVerify'),
      verifyDepth: read('proxySslVerifyDepth'),
      name: read('proxySslName'),
      serverName: read('proxySslServerName'),
      protocols: read('proxySslProtocols'),
      ciphers: read('proxySslCiphers'),
    },
    httpLevelAnnotations: ours.filter((key) => key !== annotationPrefix + annotationTable.sslPassthrough.name),
  };

  issues.sort((a, b) => compareStrings(a.annotation, b.annotation) || compareStrings(a.code, b.code));
  return { value, issues };
}

function readAnnotation<T>(
  rule: AnnotationRule<T>,
  annotations: Readonly<Record<string, string>>,
  issues: AnnotationIssue[],
): T {
  const key = annotationPrefix + rule.name;
  const raw = annotations[key];
  if (raw === undefined) return rule.defaultValue;
  const parsed = rule.schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  issues.push({
    severity: 'error',
    code: 'annotation-invalid',
    annotation: key,
    message: `${quoteKey(key)} rejected: the value ${describeRejectedValue(raw)}. Expected ${rule.accepted}.`,
  });
  return rule.defaultValue;
}
