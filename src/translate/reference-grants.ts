import { z } from 'zod';
import type { Typed } from './resources.js';

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

/** A ReferenceGrant's spec as both front ends read it (the Ingress front end for auth-url's Service). */
export const referenceGrantSchema = z.object({
  spec: z.object({
    from: z.array(z.object({ group: z.string(), kind: z.string().min(1), namespace: z.string().min(1) })).min(1).max(16),
    to: z.array(z.object({ group: z.string(), kind: z.string().min(1), name: z.string().min(1).optional() })).min(1).max(16),
  }),
});

export type ReferenceGrantSpec = z.infer<typeof referenceGrantSchema>['spec'];
