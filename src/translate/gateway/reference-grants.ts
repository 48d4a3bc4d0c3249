import type { Typed } from '../resources.js';
import type { ReferenceGrantSpec } from './schemas.js';

export interface GroupKind {
  /** '' for the core API group. */
  readonly group: string;
  readonly kind: string;
}

export interface CrossNamespaceReference {
  readonly from: GroupKind & { readonly namespace: string };
  readonly to: GroupKind & { readonly namespace: string; readonly name: string };
}

/**
 * ReferenceGrant semantics: a reference into another namespace is allowed only when a ReferenceGrant
 * in the *target* namespace lists the referrer's group, kind and namespace under `from`, and the
 * target's group and kind (and name, when `to.name` is set) under `to`. Same-namespace references
 * need no grant.
 */
export class ReferenceGrants {
  private readonly byNamespace = new Map<string, Typed<ReferenceGrantSpec>[]>();

  constructor(grants: readonly Typed<ReferenceGrantSpec>[]) {
    for (const grant of grants) {
      const list = this.byNamespace.get(grant.object.metadata.namespace) ?? [];
      list.push(grant);
      this.byNamespace.set(grant.object.metadata.namespace, list);
    }
  }

  permits(ref: CrossNamespaceReference): boolean {
    if (ref.from.namespace === ref.to.namespace) return true;
    return (this.byNamespace.get(ref.to.namespace) ?? []).some(
      ({ spec }) =>
        spec.from.some((f) => f.group === ref.from.group && f.kind === ref.from.kind && f.namespace === ref.from.namespace) &&
        spec.to.some((t) => t.group === ref.to.group && t.kind === ref.to.kind && (t.name === undefined || t.name === ref.to.name)),
    );
  }
}
