/**
 * Status as the Gateway API defines it: decided by translate, reported by the CLI and written back by
 * the cluster mode.
 */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
}

export type ResourceStatus = GatewayClassStatus | GatewayStatus | RouteStatus | PolicyStatus;

/** A GatewayClass is cluster-scoped: `namespace` is empty. */
export interface GatewayClassStatus {
  readonly kind: 'GatewayClass';
  readonly namespace: '';
  readonly name: string;
  readonly conditions: readonly Condition[];
}

export interface GatewayStatus {
  readonly kind: 'Gateway';
  readonly namespace: string;
  readonly name: string;
  readonly conditions: readonly Condition[];
  readonly listeners: readonly ListenerStatus[];
}

export interface ListenerStatus {
  readonly name: string;
  readonly attachedRoutes: number;
  readonly supportedKinds: readonly { readonly group: string; readonly kind: string }[];
  readonly conditions: readonly Condition[];
}

export interface RouteStatus {
  readonly kind: 'TLSRoute' | 'HTTPRoute' | 'GRPCRoute';
  readonly namespace: string;
  readonly name: string;
  readonly parents: readonly ParentStatus[];
}

export interface ParentReference {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly sectionName?: string;
  readonly port?: number;
}

/** RouteParentStatus of the Gateway API. */
export interface ParentStatus {
  readonly parentRef: ParentReference;
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

/** PolicyAncestorStatus of the Gateway API: the field is `ancestorRef`, not `parentRef`. */
export interface AncestorStatus {
  readonly ancestorRef: ParentReference;
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

export interface PolicyStatus {
  readonly kind: 'BackendTLSPolicy';
  readonly namespace: string;
  readonly name: string;
  /** Per ancestor Gateway the policy affects traffic through. */
  readonly ancestors: readonly AncestorStatus[];
}
