import { z } from 'zod';
import { portNumber } from '../resources.js';

/**
 * Structural schemas for the Gateway API kinds we read, modelled on what the CRDs' OpenAPI and CEL
 * validation would have rejected: manifests from files have not been through an API server. Values
 * that reach nginx (host names, names) are checked again where they are used, against the allow-lists.
 */

export const gatewayGroup = 'gateway.networking.k8s.io';

/** apiVersion+kind pairs this module reads, so resources.ts stops calling them 'kind-ignored'. */
export const gatewayKinds: Readonly<Record<string, readonly string[]>> = {
  GatewayClass: [`${gatewayGroup}/v1`, `${gatewayGroup}/v1beta1`],
  Gateway: [`${gatewayGroup}/v1`, `${gatewayGroup}/v1beta1`],
  TLSRoute: [`${gatewayGroup}/v1`, `${gatewayGroup}/v1alpha3`, `${gatewayGroup}/v1alpha2`],
  HTTPRoute: [`${gatewayGroup}/v1`, `${gatewayGroup}/v1beta1`],
  GRPCRoute: [`${gatewayGroup}/v1`],
  BackendTLSPolicy: [`${gatewayGroup}/v1`, `${gatewayGroup}/v1alpha3`],
  ReferenceGrant: [`${gatewayGroup}/v1`, `${gatewayGroup}/v1beta1`],
  Namespace: ['v1'],
  // Read for the Gateway API CRDs' bundle-version (the GatewayClass's SupportedVersion).
  CustomResourceDefinition: ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'],
};

/** Versions we still read but that the Gateway API has superseded. */
export const deprecatedVersions: Readonly<Record<string, readonly string[]>> = {
  TLSRoute: [`${gatewayGroup}/v1alpha3`, `${gatewayGroup}/v1alpha2`],
};

const objectName = z.string().min(1).max(253);
/** SectionName: a DNS-1123 subdomain. Listener names end up in nginx comments and names. */
const sectionName = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
    message: 'must be a lowercase DNS-1123 subdomain (letters, digits, "-" and ".")',
  });

export const labelSelectorSchema = z.object({
  matchLabels: z.record(z.string(), z.string()).nullish(),
  matchExpressions: z
    .array(
      z.object({
        key: z.string().min(1),
        operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
        values: z.array(z.string()).nullish(),
      }),
    )
    .nullish(),
});

export type LabelSelector = z.infer<typeof labelSelectorSchema>;

export const parametersReference = z.object({
  group: z.string(),
  kind: z.string().min(1),
  name: objectName,
  namespace: z.string().optional(),
});

export type ParametersReference = z.infer<typeof parametersReference>;

export const gatewayClassSchema = z.object({
  spec: z.object({ controllerName: z.string().min(1), parametersRef: parametersReference.nullish() }),
});

/** Just a Gateway's own parametersRef (`spec.infrastructure`), read before the rest is validated. */
export const gatewayParametersSchema = z.object({
  spec: z.object({ infrastructure: z.object({ parametersRef: z.unknown().optional() }).nullish() }),
});

/** Just enough of a Gateway to tell whether it is ours, before holding it to the full schema. */
export const gatewayClassNameSchema = z.object({ spec: z.object({ gatewayClassName: z.string() }) });

const secretObjectReference = z.object({
  group: z.string().optional(),
  kind: z.string().optional(),
  name: objectName,
  namespace: z.string().optional(),
});


const listenerSchema = z.object({
  name: sectionName,
  hostname: z.string().optional(),
  port: portNumber,
  protocol: z.string().min(1),
  tls: z
    .object({
      mode: z.enum(['Terminate', 'Passthrough']).optional(),
      certificateRefs: z.array(secretObjectReference).max(64).optional(),
      options: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  allowedRoutes: z
    .object({
      namespaces: z
        .object({
          from: z.enum(['All', 'Selector', 'Same']).optional(),
          selector: labelSelectorSchema.optional(),
        })
        .optional(),
      kinds: z.array(z.object({ group: z.string().optional(), kind: z.string().min(1) })).max(8).optional(),
    })
    .optional(),
});

export type ListenerSpec = z.infer<typeof listenerSchema>;

export const gatewaySchema = z.object({
  spec: z.object({
    gatewayClassName: z.string().min(1),
    listeners: z
      .array(listenerSchema)
      .min(1)
      .max(64)
      .superRefine((listeners, ctx) => {
        const seen = new Set<string>();
        listeners.forEach((listener, index) => {
          if (seen.has(listener.name)) {
            ctx.addIssue({ code: 'custom', message: `listener name "${listener.name}" must be unique within the Gateway`, path: [index, 'name'] });
          }
          seen.add(listener.name);
        });
      }),
  }),
});

export type GatewaySpec = z.infer<typeof gatewaySchema>['spec'];

const parentReference = z.object({
  group: z.string().optional(),
  kind: z.string().optional(),
  namespace: z.string().optional(),
  name: objectName,
  sectionName: sectionName.optional(),
  port: portNumber.optional(),
});

export type ParentReferenceSpec = z.infer<typeof parentReference>;

/** Just the parentRefs, to tell whether a TLSRoute concerns our Gateways before validating the rest. */
export const routeParentsSchema = z.object({
  spec: z.object({ parentRefs: z.array(z.unknown()).optional() }).optional(),
});

const backendRef = z
  .object({
    group: z.string().optional(),
    kind: z.string().optional(),
    name: objectName,
    namespace: z.string().optional(),
    port: portNumber.optional(),
    weight: z.number().int().min(0).max(1_000_000).optional(),
  })
  // The CRD's CEL rule; a reference of another kind is reported as InvalidKind instead.
  .refine((ref) => ref.port !== undefined || (ref.group ?? '') !== '' || (ref.kind ?? 'Service') !== 'Service', {
    message: 'port is required when referring to a Service',
    path: ['port'],
  });

export type BackendRef = z.infer<typeof backendRef>;

const routeRule = z.object({
  backendRefs: z.array(backendRef).min(1).max(16),
});

function tlsRouteSchemaFor(hostnames: 'required' | 'optional', maxRules: number, maxHostnames: number) {
  const list = z.array(z.string()).max(maxHostnames);
  return z.object({
    spec: z.object({
      parentRefs: z.array(parentReference).max(32).optional(),
      hostnames: hostnames === 'required' ? list.min(1) : list.optional(),
      rules: z.array(routeRule).min(1).max(maxRules),
    }),
  });
}

/** v1: hostnames required, exactly one rule. v1alpha3: hostnames required, up to 16 rules. v1alpha2: hostnames optional. */
export const tlsRouteSchemas: Readonly<Record<string, ReturnType<typeof tlsRouteSchemaFor>>> = {
  [`${gatewayGroup}/v1`]: tlsRouteSchemaFor('required', 1, 1024),
  [`${gatewayGroup}/v1alpha3`]: tlsRouteSchemaFor('required', 16, 16),
  [`${gatewayGroup}/v1alpha2`]: tlsRouteSchemaFor('optional', 16, 16),
};

export type TlsRouteSpec = z.infer<ReturnType<typeof tlsRouteSchemaFor>>['spec'];

/** HTTPRoute v1, as the CRD validates it; filters and matches beyond the path are read loosely and judged where used. */
const httpPathMatch = z.object({
  type: z.enum(['Exact', 'PathPrefix', 'RegularExpression']).optional(),
  value: z.string().max(1024).optional(),
});

const httpRouteMatch = z.object({
  path: httpPathMatch.optional(),
  headers: z.array(z.object({ type: z.string().optional(), name: z.string().min(1).max(256), value: z.string().max(4096) })).max(16).optional(),
  queryParams: z.array(z.object({ type: z.string().optional(), name: z.string().min(1).max(256), value: z.string().max(1024) })).max(16).optional(),
  method: z.string().optional(),
});

export type HttpRouteMatch = z.infer<typeof httpRouteMatch>;

const httpRouteFilter = z.object({ type: z.string().min(1) }).loose();

export type HttpRouteFilter = z.infer<typeof httpRouteFilter>;

const httpBackendRef = backendRef.and(z.object({ filters: z.array(httpRouteFilter).max(16).optional() }));

const httpRouteRule = z.object({
  name: sectionName.optional(),
  matches: z.array(httpRouteMatch).max(64).optional(),
  filters: z.array(httpRouteFilter).max(16).optional(),
  backendRefs: z.array(httpBackendRef).max(16).optional(),
  timeouts: z.object({ request: z.string().optional(), backendRequest: z.string().optional() }).optional(),
});

export type HttpRouteRule = z.infer<typeof httpRouteRule>;

export const httpRouteSchema = z.object({
  spec: z.object({
    parentRefs: z.array(parentReference).max(32).optional(),
    hostnames: z.array(z.string()).max(16).optional(),
    rules: z.array(httpRouteRule).max(16).optional(),
  }),
});

export type HttpRouteSpec = z.infer<typeof httpRouteSchema>['spec'];

/** GRPCRoute v1, as the CRD validates it (its CEL rules on method names included); filters are judged where used. */
const grpcMethodMatch = z
  .object({
    type: z.enum(['Exact', 'RegularExpression']).optional(),
    service: z.string().max(1024).optional(),
    method: z.string().max(1024).optional(),
  })
  .refine((m) => (m.service ?? '') !== '' || (m.method ?? '') !== '', { message: "one or both of 'service' or 'method' must be specified" })
  .refine((m) => (m.type ?? 'Exact') !== 'Exact' || m.service === undefined || /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i.test(m.service), {
    message: 'service must be dot-separated letters, digits and "_", each part starting with a letter or "_"',
    path: ['service'],
  })
  .refine((m) => (m.type ?? 'Exact') !== 'Exact' || m.method === undefined || /^[A-Za-z_][A-Za-z_0-9]*$/.test(m.method), {
    message: 'method must be letters, digits and "_", starting with a letter or "_"',
    path: ['method'],
  });

export type GrpcMethodMatch = z.infer<typeof grpcMethodMatch>;

const grpcRouteMatch = z.object({
  method: grpcMethodMatch.optional(),
  headers: z.array(z.object({ type: z.enum(['Exact', 'RegularExpression']).optional(), name: z.string().min(1).max(256), value: z.string().min(1).max(4096) })).max(16).optional(),
});

export type GrpcRouteMatch = z.infer<typeof grpcRouteMatch>;

/** The filter types GRPCRoute defines: no redirect or rewrite (those are HTTPRoute's). */
const grpcRouteFilter = z.object({ type: z.enum(['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestMirror', 'ExtensionRef']) }).loose();

const grpcRouteRule = z.object({
  name: sectionName.optional(),
  matches: z.array(grpcRouteMatch).max(8).optional(),
  filters: z.array(grpcRouteFilter).max(16).optional(),
  backendRefs: z.array(backendRef.and(z.object({ filters: z.array(grpcRouteFilter).max(16).optional() }))).max(16).optional(),
});

export type GrpcRouteRule = z.infer<typeof grpcRouteRule>;

export const grpcRouteSchema = z.object({
  spec: z.object({
    parentRefs: z.array(parentReference).max(32).optional(),
    hostnames: z.array(z.string()).max(16).optional(),
    rules: z.array(grpcRouteRule).max(16).optional(),
  }),
});

export type GrpcRouteSpec = z.infer<typeof grpcRouteSchema>['spec'];

const policyTargetRef = z.object({
  group: z.string(),
  kind: z.string().min(1),
  name: objectName,
  sectionName: sectionName.optional(),
});

/** Just the targets, to tell whether a BackendTLSPolicy concerns our routes before validating the rest. */
export const policyTargetsSchema = z.object({
  spec: z.object({ targetRefs: z.array(z.unknown()).optional() }).optional(),
});

export const backendTlsPolicySchema = z.object({
  spec: z.object({
    targetRefs: z.array(policyTargetRef).min(1).max(16),
    validation: z.object({
      caCertificateRefs: z.array(z.object({ group: z.string(), kind: z.string().min(1), name: objectName })).max(8).optional(),
      wellKnownCACertificates: z.string().optional(),
      hostname: z.string().min(1),
      subjectAltNames: z.array(z.unknown()).max(5).optional(),
    }),
    options: z.record(z.string(), z.string()).optional(),
  }),
});

export type BackendTlsPolicySpec = z.infer<typeof backendTlsPolicySchema>['spec'];

