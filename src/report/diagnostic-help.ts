/**
 * A help text per diagnostic code, for SARIF rules (code scanning shows it beside the annotated line)
 * and the review page. A code without an entry (a Gateway API reason added later) gets `genericHelp`.
 */

const help: Readonly<Record<string, string>> = {
  // Reading manifests
  'yaml-syntax': 'The document is not valid YAML or JSON. Fix the syntax; the rest of the file is still read.',
  'yaml-alias-cycle': 'A YAML alias refers to itself. Aliases are expanded with bounds; remove the cycle.',
  'yaml-alias-limit': 'The document expands too many YAML aliases (a "billion laughs" guard). Write the values out.',
  'yaml-too-deep': 'The document nests deeper than the parser allows. Flatten it.',
  'resource-malformed': 'The object lacks apiVersion, kind or metadata.name, or they have the wrong type; it is ignored.',
  'resource-invalid': 'A field of the resource does not match its schema; the message names the field. The resource is left out.',
  'resource-name-invalid': 'metadata.name or metadata.namespace is not a valid Kubernetes name; the resource is left out.',
  'resource-duplicate': 'The same kind/namespace/name appears twice in the input; only the first one is used.',
  'kind-ignored': 'This kind plays no part in the config and is ignored.',
  'api-version-unsupported': 'This apiVersion of the kind is not understood; use a supported version.',
  'api-version-deprecated': 'This apiVersion still works but is deprecated; move to the current version.',
  'annotation-not-string': 'Annotation values must be strings; quote the value.',
  'label-not-string': 'Label values must be strings; quote the value.',
  'secret-data-invalid': 'Secret data must be base64 (data) or text (stringData); the Secret is not used.',
  // Ingress
  'ingress-class-skipped': 'The Ingress names another IngressClass (or none, without --watch-ingress-without-class); it is not ours.',
  'ingress-skipped': 'The Ingress has annotation errors and is left out until they are fixed, so no half-applied setting reaches nginx.',
  'annotation-invalid': 'The annotation value is not one the annotation accepts; the Ingress is left out. The message names what is accepted.',
  'annotation-unknown': 'The annotation is in the nginx.ingress.kubernetes.io/ prefix but no such annotation exists (a typo?). It is ignored.',
  'annotation-unsupported': 'ingress-nginx knows this annotation but ingress2nginx does not implement it; it is ignored.',
  'annotation-refused': 'ingress2nginx refuses this annotation on purpose (the message says why); the Ingress is left out until it is removed.',
  'annotation-differs': 'The annotation is implemented, but not exactly as ingress-nginx does it; the message says how. Nothing is left out.',
  'backend-proxy-protocol-invalid': 'ingress2nginx.dev/backend-proxy-protocol takes "v1" or "v2"; the Ingress is left out until it is fixed, since its backend expects a header.',
  'backend-proxy-protocol-unsupported': 'PROXY protocol v2 to backends needs nginx 1.31.4 or later; use "v1" or render for a newer nginx. The Ingress is left out until then.',
  'backend-proxy-protocol-ignored': 'PROXY protocol to backends applies to ssl-passthrough hosts only; this Ingress serves none, so no header is sent.',
  'snippet-refused': 'Snippet annotations and ConfigMap keys put raw text into nginx.conf (how IngressNightmare happened); they are refused.',
  'canary-invalid': 'The canary annotation is not a boolean; the Ingress is left out, since as a main Ingress it would compete for the path it means to split.',
  'canary-not-enabled': 'canary-* annotations have no effect without canary: "true".',
  'canary-header-missing': 'canary-by-header-value and canary-by-header-pattern need canary-by-header, the header they look at; they are ignored.',
  'canary-ignores': 'A canary only splits its main Ingress\'s traffic: its spec.tls and most other annotations have no effect; the message names them.',
  'canary-without-main': 'No Ingress routes this host, path and path type, so the canary serves nothing there: a canary never claims a path by itself.',
  'canary-other-namespace': 'The path is routed by an Ingress in another namespace; a canary only splits traffic of its own namespace.',
  'canary-conflict': 'An older canary already splits this location; one canary per location, so this one is not used there.',
  'canary-main-unavailable': 'The main Ingress cannot proxy this path (see its diagnostics), so there is nothing to split.',
  'canary-takes-nothing': 'canary-weight is 0 and no header or cookie is set, so no request goes to the canary.',
  'proxy-redirect-default-ignored':
    'proxy-redirect-from: default needs a fixed proxy_pass address; with a per-request backend (a runtime name or a canary split) redirects are passed unchanged.',
  'rewrite-target-unchanged': 'rewrite-target equals every path, so nothing is rewritten; remove it or the annotation is noise.',
  'rewrite-target-group-missing': 'rewrite-target refers to a capture group the path does not have; nginx puts nothing in its place. Add the group to the path.',
  'regex-path-yields':
    'Regex paths on a host shared with another namespace never take requests that the other namespace\'s Prefix paths match (those get `^~`); ingress-nginx would turn them all into regexes.',
  'limit-allowlist-without-limit': 'limit-whitelist only exempts clients from limit-rps, limit-rpm or limit-connections; without one of them it does nothing.',
  'default-backend-unresolved': 'The default-backend annotation names a Service that is not in the input or has no port; nginx answers errors itself.',
  'backend-no-endpoints': 'The Service has no ready endpoints; as in ingress-nginx, the path is served by the default-backend annotation\'s Service.',
  'host-alias-taken': 'server-alias or from-to-www-redirect asks for a host another resource claims; an alias never takes a host.',
  'alias-certificate': 'The certificate does not serve the alias host (server-alias or from-to-www-redirect), which gets the default certificate.',
  'auth-tls-conflict': 'A host has one client CA and depth: an older Ingress decides them, and this Ingress\'s paths that ask for another answer 503.',
  'host-invalid': 'The host must be a lowercase RFC 1123 DNS name, optionally with a leading "*." label; the rule is not rendered.',
  'path-invalid': 'The path must start with "/" and use only safe characters; the path is not rendered.',
  'path-conflict': 'An older Ingress (or an earlier path of the same Ingress) already routes this host and path; this one is ignored there.',
  'secret-name-invalid': 'spec.tls[].secretName must be a DNS-1123 name; the hosts are served with the default certificate.',
  'tls-secret-invalid': 'The TLS Secret is missing, does not parse, does not match its key, does not cover the host or is out of date; the host is served with the default certificate.',
  'tls-conflict': 'An older Ingress names another Secret for this host; its certificate is used.',
  'tls-shadowed-by-passthrough': 'An older Ingress passes this host\'s TLS through by SNI, so this certificate is never used.',
  'passthrough-conflict': 'Another (older) Ingress decides how this host\'s TLS is handled; this ssl-passthrough claim is ignored.',
  'passthrough-ignores': 'With ssl-passthrough nginx never sees HTTP: other paths, spec.tls and HTTP-level annotations do not apply to TLS traffic.',
  'passthrough-without-host': 'ssl-passthrough routes by SNI, so a rule without host can never match; add spec.rules[].host.',
  'passthrough-without-backend': 'ssl-passthrough uses the backend of path "/" (or spec.defaultBackend), and there is none; connections are closed.',
  'host-tls-passed-through': 'Another Ingress passes this host\'s TLS through, so this Ingress\'s paths are reached over plain HTTP only.',
  'host-shared-across-namespaces': 'Ingresses from several namespaces add paths to one host; set first-namespace-owns-host to refuse that.',
  'host-owned-by-namespace': 'first-namespace-owns-host is set and another namespace claimed the host first; these rules are not rendered.',
  'sni-conflict': 'Two resources claim the same SNI name on one port; the older one (or an Ingress with spec.tls for the exact name) keeps it.',
  'backend-unsupported': 'Only Service backends are supported; the path answers 503.',
  'backend-unresolved': 'The backend Service or port cannot be resolved; the path answers 503 (passthrough: connections are closed).',
  'service-dns-name': 'The Service is not in the input (or is headless); nginx resolves its cluster DNS name at request time with --resolver.',
  'proxy-ssl-ignored': 'proxy-ssl-* annotations apply only to HTTPS and GRPCS backends; set backend-protocol.',
  'proxy-ssl-secret-cross-namespace': 'proxy-ssl-secret names a Secret in another namespace; move it or pass --allow-cross-namespace-secrets. The backend answers 503.',
  'proxy-ssl-secret-invalid': 'The proxy-ssl-secret is missing or its ca.crt / client certificate is invalid; the backend answers 503.',
  'proxy-ssl-verify-without-ca': 'proxy-ssl-verify is on without a CA; the backend answers 503 rather than being reached unverified.',
  'configmap-not-found': 'The ConfigMap named with --configmap is not in the input; defaults are used.',
  'configmap-invalid': 'A ConfigMap key has a value it does not accept; the default is used for it.',
  'configmap-key-unsupported': 'The ConfigMap key is not implemented and is ignored.',
  'default-certificate-invalid': 'The --default-certificate Secret is unusable; the bundled self-signed certificate is used instead.',
  'nginx-rejected': 'nginx -t fails with this resource in the config; it is left out so everything else is served. The message carries nginx\'s words.',
  // Gateway API
  'gateway-class-controller-mismatch': 'The GatewayClass names another controller; its Gateways are not ours.',
  'gateway-invalid': 'The Gateway does not validate; it is not programmed.',
  'listeners-not-valid': 'At least one listener of the Gateway is not valid; see the listener diagnostics.',
  'unsupported-protocol': 'Only TLS listeners are served; this listener is not programmed.',
  'unsupported-value': 'A field of the listener has a value that is not supported.',
  'protocol-conflict': 'Listeners on one port disagree on the protocol; they are not programmed.',
  'hostname-conflict': 'Listeners on one port share a hostname; they are not programmed.',
  'invalid-certificate-ref': 'A listener certificateRef is not a usable kubernetes.io/tls Secret; the listener is not programmed.',
  'invalid-route-kinds': 'allowedRoutes.kinds names a kind other than TLSRoute.',
  'ref-not-permitted': 'A reference to another namespace is not allowed by a ReferenceGrant.',
  'allowed-routes-selector-invalid': 'allowedRoutes.namespaces.selector is not a valid label selector; no namespace matches.',
  'certificate-ignored': 'A Passthrough listener has certificateRefs; they are not used.',
  'certificate-hostname-mismatch': 'The listener certificate does not cover the listener hostname.',
  'hostname-invalid': 'A hostname is not a valid DNS name (or wildcard with one leading "*." label).',
  'hostname-required': 'A TLSRoute needs spec.hostnames to be routed by SNI.',
  'route-rules-ignored': 'A TLSRoute has exactly one rule; further rules are ignored.',
  'route-hostname-conflict': 'An older route already holds this hostname on the listener; this one gets no connections for it.',
  'not-allowed-by-listeners': 'No listener of the parent Gateway allows routes from this namespace or of this kind.',
  'no-matching-listener-hostname': 'The route hostnames and the listener hostname do not intersect; the route gets no traffic.',
  'no-matching-parent': 'The parentRef names no listener (sectionName or port) of the Gateway.',
  'backend-not-found': 'A backendRef names a Service that is not in the input; its share of connections is closed.',
  'invalid-kind': 'A backendRef is not a Service; its share of connections is closed.',
  'backend-weighted-by-name': 'A backend nginx resolves by name cannot be one of several weighted backends; its share is closed.',
  'backend-tls-mixed': 'The backends of a route differ in backend TLS; connections through Terminate listeners are closed.',
  'backend-tls-policy-invalid': 'The BackendTLSPolicy does not validate; connections to its targets are closed, never sent in plain.',
  'backend-tls-policy-unusable': 'The BackendTLSPolicy cannot be applied; connections to its targets are closed, never sent in plain.',
  'backend-tls-policy-option-ignored': 'An option of the BackendTLSPolicy is not implemented and is ignored.',
  'invalid-ca-certificate-ref': 'The BackendTLSPolicy caCertificateRefs name no usable ConfigMap with ca.crt.',
  'no-valid-ca-certificate': 'No CA certificate of the BackendTLSPolicy parses.',
};

function genericHelp(code: string): string {
  return `ingress2nginx reports "${code}": the message says what is wrong and what was done about it (a resource is left out, or a path answers 503, or connections are closed).`;
}

export function diagnosticHelp(code: string): string {
  return help[code] ?? genericHelp(code);
}

export function hasHelp(code: string): boolean {
  return Object.hasOwn(help, code);
}
