import type { FieldPath } from '../../model/diagnostics.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { Reporter } from '../report.js';
import type { Condition, ConditionStatus } from '../../model/status.js';

export function condition(type: string, status: ConditionStatus, reason: string, message: string): Condition {
  return { type, status, reason, message };
}

/** `RefNotPermitted` → `ref-not-permitted`, `InvalidCACertificateRef` → `invalid-ca-certificate-ref`. */
export function kebabCase(reason: string): string {
  return reason
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

/**
 * Severity of the diagnostic that accompanies a False condition (or Conflicted=True): broken references
 * and invalid values are errors, attachment and conflict outcomes are warnings.
 */
const errorReasons = new Set([
  'BackendNotFound',
  'RefNotPermitted',
  'InvalidKind',
  'InvalidCertificateRef',
  'InvalidCACertificateRef',
  'NoValidCACertificate',
  'UnsupportedValue',
  'Invalid',
]);

/** Reports a condition outcome as a diagnostic; the code is the reason in kebab case. */
export function reportReason(report: Reporter, object: SourceObject, reason: string, message: string, path: FieldPath): void {
  const code = reason === 'Invalid' ? `${kebabCase(object.kind)}-invalid` : kebabCase(reason);
  if (errorReasons.has(reason)) report.error(code, object, message, path);
  else report.warning(code, object, message, path);
}
