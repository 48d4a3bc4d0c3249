/**
 * The Ingress front end: the Ingresses of our class, oldest first, each turned into its claims
 * (ingress.ts), with the backends, http-level extensions and snippets they bring. It may import settle/
 * (the claim vocabulary) and the shared ground of translate/, never gateway/.
 */

import type { SourceObject } from '../../sources/snapshot.js';
import type { BackendPolicy, ResolvedBackend } from '../backends.js';
import type { NginxFeatures } from '../nginx-version.js';
import type { TranslateOptions } from '../options.js';
import type { ReferenceGrants } from '../reference-grants.js';
import type { Reporter } from '../report.js';
import type { IngressSpec, Resources, Typed } from '../resources.js';
import type { SecretFiles } from '../secrets/secret-files.js';
import type { IngressContribution, ProxyProtocolRequest } from '../settle/claims.js';
import { HttpExtensionRegistry } from '../settle/extensions.js';
import { compareAge } from '../settle/precedence.js';
import { backendProxyProtocolField, requestedProxyProtocol } from './backend-proxy-protocol.js';
import { ingressClaimValue, type IngressClaimMemo, type SharedIngressContext } from './claim-memo.js';
import { ingressClassDecision } from './classes.js';
import type { ControllerSettings } from './configmap.js';
import type { HeaderDefaults } from './header-configmaps.js';
import { routeCountOf, withinSizeLimits, type RouteCountMemo } from './size-limits.js';
import { NamespaceBudget } from '../checks/size-budget.js';
import { SnippetRegistry, type ConfigMapSnippets, type SnippetScope } from './snippets.js';

/** What the Ingress front end reads of the build's inputs (translate/inputs.ts makes them). */
export interface IngressInputs {
  readonly objects: readonly SourceObject[];
  readonly resources: Resources;
  readonly settings: ControllerSettings;
  readonly secrets: SecretFiles;
  readonly backendPolicy: BackendPolicy;
  readonly headers: HeaderDefaults;
  readonly snippetScope: SnippetScope;
  readonly configMapSnippets: ConfigMapSnippets;
  readonly referenceGrants: ReferenceGrants;
}

/** What the Ingress front end may reuse from the last build (the cluster mode keeps these). */
export interface IngressFrontEndMemo {
  readonly ingressClaims: IngressClaimMemo;
  readonly routeCounts: RouteCountMemo;
}

/** The Ingress front end's output: the Ingresses of our class, and the claims each makes. */
export interface IngressClaims {
  readonly ours: readonly Typed<IngressSpec>[];
  readonly contributions: readonly IngressContribution[];
  readonly proxyProtocolRequests: ReadonlyMap<SourceObject, ProxyProtocolRequest>;
  readonly backends: Map<string, ResolvedBackend>;
  readonly extensions: HttpExtensionRegistry;
  readonly snippets: SnippetRegistry;
}

/** The Ingress front end: the Ingresses of our class, oldest first, each turned into its claims. */
export function ingressClaims(
  inputs: IngressInputs,
  options: TranslateOptions,
  features: NginxFeatures,
  report: Reporter,
  memo: IngressFrontEndMemo | undefined,
  budget: NamespaceBudget = new NamespaceBudget(),
): IngressClaims {
  const { resources, settings, secrets, backendPolicy } = inputs;
  const backends = new Map<string, ResolvedBackend>();
  const extensions = new HttpExtensionRegistry();
  const snippets = new SnippetRegistry(inputs.configMapSnippets['location-snippet']);
  const controllerConfigMap = options.configMap === undefined ? undefined : resources.configMaps.get(options.configMap)?.object;
  const context: SharedIngressContext = {
    resources,
    secrets,
    backendPolicy,
    allowCrossNamespaceSecrets: options.allowCrossNamespaceSecrets,
    allowCrossNamespaceAuthUrl: options.allowCrossNamespaceAuthUrl ?? false,
    settings,
    headers: inputs.headers,
    // Behind PROXY protocol with forwarded headers the client is in X-Forwarded-For (see the http maps).
    clientAddress: settings.useForwardedHeaders && settings.useProxyProtocol ? '$i2n_client_addr' : '$remote_addr',
    limitKey: settings.useForwardedHeaders && settings.useProxyProtocol ? '$i2n_client_addr' : '$binary_remote_addr',
    snippetScope: inputs.snippetScope,
    referenceGrants: inputs.referenceGrants,
    controllerErrorPages: options.defaultBackendService !== undefined && settings.customHttpErrors.length > 0,
    ...(controllerConfigMap && { controllerConfigMap }),
  };
  // A data plane of chosen Gateways (`--gateway`) serves no Ingress: the Ingresses have their own.
  const ours = withinSizeLimits(
    [...(options.gateways === undefined ? resources.ingresses : [])]
      .sort((a, b) => compareAge(a.object, b.object))
      .filter((ingress) => {
        const decision = ingressClassDecision(ingress, resources, options.ingressClass, options.watchIngressWithoutClass);
        if (!decision.serve) report.info('ingress-class-skipped', ingress.object, `not ours: ${decision.reason}`);
        return decision.serve;
      }),
    report,
    memo ? memo.routeCounts.in('', routeCountOf) : routeCountOf,
    budget,
  );
  const proxyProtocolRequests = new Map<SourceObject, ProxyProtocolRequest>();
  const claimsOf = memo && !options.expectClusterProvided ? memo.ingressClaims.begin(claimContext(inputs, options), resources) : ingressClaimValue;
  const contributions = ours.map((ingress): IngressContribution => {
    const proxyProtocol = requestedProxyProtocol(ingress.object, features, report);
    if (proxyProtocol === false) return { passthrough: [], tls: [], routes: [], canaries: [] };
    if (proxyProtocol) proxyProtocolRequests.set(ingress.object, { version: proxyProtocol, field: backendProxyProtocolField });
    // Each Ingress's claims are a value; the build takes in what making them produced, in Ingress order.
    const value = claimsOf(ingress, context);
    if (value.diagnostics.length > 0) report.diagnostics.push(...value.diagnostics);
    value.backends.forEach((backend, upstream) => backends.set(upstream, backend));
    extensions.absorb(value.extensions);
    snippets.absorb(value.snippets);
    secrets.replay(value.secrets);
    return value.contribution;
  });
  return { ours, contributions, proxyProtocolRequests, backends, extensions, snippets };
}

/**
 * What the context every Ingress shares is made of, by identity: the options but the clock and the
 * quarantine (which act through the objects) and the cache of parsed key pairs (which changes no result),
 * and the objects the settings, header defaults, snippet scope and ReferenceGrants are read from. A claim
 * that reads anything else records it itself.
 */
function claimContext(inputs: IngressInputs, options: TranslateOptions): unknown[] {
  const configMap = (namespacedName: string | undefined) => (namespacedName === undefined ? undefined : inputs.resources.configMaps.get(namespacedName)?.object.raw);
  return [
    JSON.stringify({ ...options, now: undefined, quarantine: undefined, keyPairs: undefined }),
    configMap(options.configMap),
    ...inputs.headers.configMaps.map((ref) => configMap(`${ref.namespace}/${ref.name}`)),
    ...inputs.objects.filter((o) => o.kind === 'Namespace' || o.kind === 'ReferenceGrant').map((o) => o.raw),
  ];
}

