import type { FieldPath } from '../../model/diagnostics.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { isDnsHostname, isKubernetesName, quoteKey } from '../checks/allowlist.js';
import { byString } from '../settle/precedence.js';
import type { Reporter } from '../report.js';
import { resourceName } from '../report.js';
import { key, type Resources } from '../resources.js';
import type { SecretFiles, ObjectRef } from '../secrets/secret-files.js';
import { condition, reportReason } from './conditions.js';
import { parseWith } from '../resources.js';
import type { BackendTlsPlan } from '../settle/port-plan.js';
import type { Condition, PolicyStatus } from '../../model/status.js';
import type { RouteBackend } from './routes.js';
import { backendTlsPolicySchema, gatewayGroup, policyTargetsSchema } from './schemas.js';

export interface PolicyContext {
  readonly resources: Resources;
  readonly secrets: SecretFiles;
  readonly report: Reporter;
  readonly controllerName: string;
  readonly systemCaBundle: string;
}

/** What a Terminate backend gets from the BackendTLSPolicy that applies to its Service port. */
export interface AppliedPolicy {
  readonly policy: SourceObject;
  /** Undefined: the policy is invalid, and connections to the backend must be closed (never plaintext). */
  readonly tls?: BackendTlsPlan;
  /** Why it is unusable, for the route's diagnostic. */
  readonly problem?: string;
}

interface Validation {
  readonly conditions: readonly Condition[];
  readonly usable: boolean;
  readonly hostname?: string;
  readonly caRef?: ObjectRef;
}

interface Target {
  readonly namespace: string;
  readonly service: string;
  readonly sectionName?: string;
  readonly index: number;
}

interface Entry {
  readonly object: SourceObject;
  readonly targets: readonly Target[];
  validation?: Validation;
  /** Ancestor Gateway `namespace/name` → whether the policy lost a conflict for traffic through it. */
  readonly ancestors: Map<string, boolean>;
}

/**
 * BackendTLSPolicies by the Service port they target. A policy naming a port (`sectionName`, the
 * Service port's name) is more specific than one for the whole Service and applies first; between
 * policies for the same target the oldest wins, then the name, and the others are Conflicted.
 * Policies are validated only once they matter for our traffic, so that policies meant for other
 * implementations are not reported.
 */
export class BackendTlsPolicies {
  private readonly scopes = new Map<string, Entry[]>();
  private readonly entries: Entry[] = [];
  private readonly reportedConflicts = new Set<string>();

  /** `policies` sorted oldest first (then namespace/name). */
  constructor(
    policies: readonly SourceObject[],
    private readonly ctx: PolicyContext,
  ) {
    for (const object of policies) {
      const entry: Entry = { object, targets: looseTargets(object), ancestors: new Map() };
      this.entries.push(entry);
      const scopes = new Set(entry.targets.map((t) => scopeKey(t.namespace, t.service, t.sectionName)));
      for (const scope of scopes) {
        const list = this.scopes.get(scope) ?? [];
        list.push(entry);
        this.scopes.set(scope, list);
      }
    }
  }

  /**
   * The policy for a backend reached through `gateway` (`namespace/name`), recording the Gateway as an
   * ancestor of every policy that competed for it. Undefined: no policy, the backend gets plain TCP.
   */
  forBackend(backend: RouteBackend, gateway: string): AppliedPolicy | undefined {
    const specific = backend.portName !== undefined ? this.scopes.get(scopeKey(backend.namespace, backend.service, backend.portName)) : undefined;
    const scope = specific ? scopeKey(backend.namespace, backend.service, backend.portName) : scopeKey(backend.namespace, backend.service);
    const candidates = specific ?? this.scopes.get(scope);
    const [winner, ...losers] = candidates ?? [];
    if (!winner) return undefined;
    winner.ancestors.set(gateway, winner.ancestors.get(gateway) ?? false);
    for (const loser of losers) {
      loser.ancestors.set(gateway, true);
      this.reportConflict(loser, winner, scope, backend);
    }
    const validation = this.validate(winner);
    if (!validation.usable || validation.hostname === undefined) {
      const reasons = validation.conditions.filter((c) => c.status === 'False').map((c) => c.message);
      return { policy: winner.object, problem: reasons.join('; ') };
    }
    return { policy: winner.object, tls: this.plan(winner, validation) };
  }

  statuses(): PolicyStatus[] {
    const statuses: PolicyStatus[] = [];
    for (const entry of this.entries) {
      if (entry.ancestors.size === 0) continue;
      const validation = this.validate(entry);
      const ancestors = [...entry.ancestors.entries()].sort(byString(([gateway]) => gateway)).map(([gateway, conflicted]) => {
        const [namespace = '', name = ''] = gateway.split('/');
        const conditions = conflicted
          ? [
              condition('Accepted', 'False', 'Conflicted', 'An older BackendTLSPolicy targets the same Service port for traffic through this Gateway'),
              ...validation.conditions.filter((c) => c.type !== 'Accepted'),
            ]
          : validation.conditions;
        return { ancestorRef: { group: gatewayGroup, kind: 'Gateway', namespace, name }, controllerName: this.ctx.controllerName, conditions };
      });
      statuses.push({ kind: 'BackendTLSPolicy', namespace: entry.object.metadata.namespace, name: entry.object.metadata.name, ancestors });
    }
    return statuses;
  }

  private plan(entry: Entry, validation: Validation): BackendTlsPlan {
    const trustedCertificate = validation.caRef ? this.emittedCaBundle(validation.caRef) : this.ctx.systemCaBundle;
    return { trustedCertificate, hostname: validation.hostname ?? '', policy: resourceName(entry.object) };
  }

  /** Validation already parsed this bundle; never fall back to another CA if writing it fails. */
  private emittedCaBundle(ref: ObjectRef): string {
    const emitted = this.ctx.secrets.configMapCaBundle(ref);
    if (!emitted.ok) throw new Error(`CA bundle of a validated BackendTLSPolicy could not be emitted: ${emitted.problem}`);
    return emitted.value;
  }

  private reportConflict(loser: Entry, winner: Entry, scope: string, backend: RouteBackend): void {
    const id = `${resourceName(loser.object)}|${scope}`;
    if (this.reportedConflicts.has(id)) return;
    this.reportedConflicts.add(id);
    const target = loser.targets.find(
      (t) => t.namespace === backend.namespace && t.service === backend.service && (t.sectionName === undefined || t.sectionName === backend.portName),
    );
    const what = `Service ${key(backend.namespace, backend.service)}${backend.portName !== undefined && target?.sectionName !== undefined ? ` port ${backend.portName}` : ''}`;
    reportReason(
      this.ctx.report,
      loser.object,
      'Conflicted',
      `BackendTLSPolicy ${resourceName(winner.object)} (older, or first by name) already applies to ${what}; this policy does not`,
      target ? ['spec', 'targetRefs', target.index] : ['spec', 'targetRefs'],
    );
  }

  /** Validates a policy once, reporting every problem; an invalid policy closes its backends' connections. */
  private validate(entry: Entry): Validation {
    if (entry.validation) return entry.validation;
    const validation = this.check(entry.object);
    entry.validation = validation;
    return validation;
  }

  private check(object: SourceObject): Validation {
    const { report, secrets } = this.ctx;
    const parsed = parseWith(backendTlsPolicySchema, object, report);
    if (!parsed) {
      return {
        conditions: [condition('Accepted', 'False', 'Invalid', 'The policy is malformed (see its diagnostics); connections to its targets are closed')],
        usable: false,
      };
    }
    const { validation, options } = parsed.spec;
    const path: FieldPath = ['spec', 'validation'];
    const invalid: string[] = [];
    const problem = (message: string, at: FieldPath) => {
      invalid.push(message);
      reportReason(report, object, 'Invalid', `${message}; connections to the targeted backends are closed, never sent in plaintext`, at);
    };

    const hostnameOk = isDnsHostname(validation.hostname);
    if (!hostnameOk) problem('validation.hostname must be a lowercase DNS name without wildcard', [...path, 'hostname']);
    if ((validation.subjectAltNames ?? []).length > 0) {
      problem(
        'validation.subjectAltNames is not supported: nginx verifies the backend certificate against the same name it sends as SNI, validation.hostname; remove subjectAltNames',
        [...path, 'subjectAltNames'],
      );
    }
    for (const option of Object.keys(options ?? {}).sort()) {
      report.warning('backend-tls-policy-option-ignored', object, `option ${quoteKey(option)} is not supported by ingress2nginx and is ignored`, [
        'spec',
        'options',
        option,
      ]);
    }
    const refs = validation.caCertificateRefs ?? [];
    const wellKnown = validation.wellKnownCACertificates ?? '';
    if (refs.length > 0 && wellKnown !== '') {
      problem('set either validation.caCertificateRefs or validation.wellKnownCACertificates, not both', path);
    } else if (refs.length === 0 && wellKnown === '') {
      problem('set validation.caCertificateRefs (a ConfigMap with ca.crt) or validation.wellKnownCACertificates: System', path);
    } else if (wellKnown !== '' && wellKnown !== 'System') {
      problem(`validation.wellKnownCACertificates must be System`, [...path, 'wellKnownCACertificates']);
    }
    if (refs.length > 1) {
      problem(
        'more than one caCertificateRef is not supported; put all CA certificates into the ca.crt of one ConfigMap',
        [...path, 'caCertificateRefs'],
      );
    }

    const unresolved: { reason: string; message: string }[] = [];
    let caRef: ObjectRef | undefined;
    refs.forEach((ref, index) => {
      const at: FieldPath = [...path, 'caCertificateRefs', index];
      const fail = (reason: string, message: string) => {
        unresolved.push({ reason, message });
        reportReason(report, object, reason, `${message}; connections to the targeted backends are closed, never sent in plaintext`, at);
      };
      if (ref.group !== '' || ref.kind !== 'ConfigMap') {
        fail('InvalidKind', `caCertificateRefs[${index}] refers to ${ref.kind} in group "${ref.group}"; only core ConfigMaps are supported`);
        return;
      }
      if (!isKubernetesName(ref.name)) {
        fail('InvalidCACertificateRef', `caCertificateRefs[${index}] is not a valid ConfigMap name`);
        return;
      }
      const candidate = { namespace: object.metadata.namespace, name: ref.name };
      const checked = secrets.configMapCaBundle(candidate, { emit: false });
      if (!checked.ok) {
        fail('InvalidCACertificateRef', checked.problem);
        return;
      }
      caRef ??= candidate;
    });

    const firstUnresolved = unresolved[0];
    const resolvedRefs = firstUnresolved
      ? condition('ResolvedRefs', 'False', firstUnresolved.reason, unresolved.map((u) => u.message).join('; '))
      : condition('ResolvedRefs', 'True', 'ResolvedRefs', 'All references resolved');
    let accepted: Condition;
    if (refs.length > 0 && unresolved.length === refs.length) {
      const message = 'No caCertificateRef is valid, so connections to the targeted backends are closed';
      reportReason(report, object, 'NoValidCACertificate', `${message}; fix the ConfigMap (key ca.crt, PEM certificates)`, [...path, 'caCertificateRefs']);
      accepted = condition('Accepted', 'False', 'NoValidCACertificate', message);
    } else if (invalid.length > 0) {
      accepted = condition('Accepted', 'False', 'Invalid', invalid.join('; '));
    } else {
      accepted = condition('Accepted', 'True', 'Accepted', 'Policy is accepted');
    }
    const usable = accepted.status === 'True' && resolvedRefs.status === 'True';
    return {
      conditions: [accepted, resolvedRefs],
      usable,
      ...(hostnameOk && { hostname: validation.hostname }),
      ...(caRef && { caRef }),
    };
  }
}

function scopeKey(namespace: string, service: string, sectionName?: string): string {
  return `${namespace}/${service}#${sectionName ?? ''}`;
}

/** Service targets read without the full schema, so a malformed policy still closes its targets. */
function looseTargets(object: SourceObject): Target[] {
  const loose = policyTargetsSchema.safeParse(object.raw);
  if (!loose.success) return [];
  const targets: Target[] = [];
  (loose.data.spec?.targetRefs ?? []).forEach((ref, index) => {
    if (typeof ref !== 'object' || ref === null) return;
    const r = ref as Record<string, unknown>;
    if (r.group !== '' || r.kind !== 'Service' || typeof r.name !== 'string') return;
    const sectionName = typeof r.sectionName === 'string' && r.sectionName !== '' ? r.sectionName : undefined;
    targets.push({ namespace: object.metadata.namespace, service: r.name, ...(sectionName !== undefined && { sectionName }), index });
  });
  return targets;
}
