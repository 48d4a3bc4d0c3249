import type { SourceObject } from '../sources/snapshot.js';
import type { KeyPairCache } from './secrets/key-pairs.js';

/** Everything translate needs besides the snapshot. No defaults are read from the environment here. */
export interface TranslateOptions {
  /** IngressClass name we serve (`--ingress-class`). */
  readonly ingressClass: string;
  /** GatewayClass name we serve (`--gateway-class`). */
  readonly gatewayClass: string;
  /**
   * `--gateway namespace/name` (repeatable): a data plane of these Gateways alone, with their routes and
   * policies; no Ingress and no other Gateway is served or given status. Unset: every Gateway of the class.
   */
  readonly gateways?: readonly string[];
  /** CA bundle for BackendTLSPolicy `wellKnownCACertificates: System`. */
  readonly systemCaBundle: string;
  /** Also serve Ingresses without any class (`--watch-ingress-without-class`). */
  readonly watchIngressWithoutClass: boolean;
  /** `namespace/name` of the controller ConfigMap, if any. */
  readonly configMap?: string;
  /** `namespace/name` of the ConfigMaps of TCP and UDP services (`--tcp-services-configmap`, `--udp-services-configmap`). */
  readonly tcpServicesConfigMap?: string;
  readonly udpServicesConfigMap?: string;
  /** Snippets, off unless allowed (see ingress/snippets.ts). */
  readonly snippets?: SnippetOptions;
  /**
   * `namespace/name` of the Service (its first port) that answers what no Ingress path matches and the
   * controller ConfigMap's `custom-http-errors` (`--default-backend-service`); else nginx answers 404.
   */
  readonly defaultBackendService?: string;
  /** `namespace/name` of the default certificate Secret, if any; else the bundled fallback. */
  readonly defaultCertificate?: string;
  /**
   * A host belongs to the namespace that claimed it first (`--first-namespace-owns-host`; the ConfigMap
   * key of the same name turns it on too): other namespaces' claims on it are not rendered.
   */
  readonly firstNamespaceOwnsHost?: boolean;
  /** Allow `proxy-ssl-secret` to name a Secret in another namespace. */
  readonly allowCrossNamespaceSecrets: boolean;
  /**
   * Let `auth-url` name a Service in another namespace without a ReferenceGrant there
   * (`--allow-cross-namespace-auth-url`), as ingress-nginx lets it name any URL.
   */
  readonly allowCrossNamespaceAuthUrl?: boolean;
  readonly clusterDomain: string;
  /**
   * `resolver` addresses (`IP` or `IP:port`, `--resolver`). Given, backends known only by a DNS name
   * (ExternalName, headless, or not in the input) are resolved by nginx per request; absent, they
   * cannot be used (503 / closed), since a name in an upstream block that does not resolve would stop
   * the whole config from loading.
   */
  readonly resolvers?: readonly string[];
  /** `--disable-svc-external-name`: ExternalName Services are never backends. */
  readonly disableExternalName?: boolean;
  /** `--external-name-suffix`: when given, an ExternalName must lie in one of these domains. */
  readonly externalNameSuffixes?: readonly string[];
  /**
   * `service` (default): a Service is reached at its ClusterIP. `endpoints`: at the ready addresses of
   * its EndpointSlices, as ingress-nginx does, so nginx balances over the Pods itself.
   */
  readonly upstreams?: 'service' | 'endpoints';
  /**
   * The sidecar's resolver, with `upstreams: 'endpoints'` (`run`, `render --endpoint-resolver`): on nginx
   * 1.27.3 or later an upstream `server` names the Service and nginx resolves its endpoints at run time
   * from this address (`resolve`), so a Pod that comes, goes or turns unready changes no config and needs
   * no reload; older nginx gets the endpoints written in. While a Service has no endpoint, the resolver
   * answers with nginx's own 503 server on `127.0.0.1:noEndpointsPort`.
   */
  readonly endpointResolver?: { readonly address: string; readonly noEndpointsPort: number };
  readonly httpPort: number;
  readonly httpsPort: number;
  /**
   * Ports the Pod already uses besides nginx's (the sidecar's metrics and probes port), with what uses
   * each: no Gateway listener or TCP/UDP service may take one. `nginx -t` never binds, so only the
   * reload would find out, and nginx refuses every reload after that.
   */
  readonly reservedPorts?: ReadonlyMap<number, string>;
  /** Absolute directory for pid file, unix sockets and temp files. */
  readonly runDir: string;
  readonly nginxVersion: string;
  /**
   * `--certificates-per-handshake`: one SSL context for every terminated host, the certificate chosen
   * by SNI and read by the workers per handshake, instead of one context per host loaded with the config.
   */
  readonly certificatesPerHandshake?: boolean;
  /** `access_log` target: absolute path or `off`. */
  readonly accessLog: string;
  /** Absolute path of the file nginx appends per-request lines to, for the cluster mode's request metrics; absent: none. */
  readonly requestLog?: string;
  /** nginx has `stub_status`: with `requestLog`, the control socket answers it at `/nginx_status`. */
  readonly stubStatus?: boolean;
  /** Absolute path to `ngx_stream_module.so`, or undefined when nginx is built with stream. */
  readonly streamModulePath?: string;
  /** For certificate expiry checks. */
  readonly now: Date;
  /**
   * Key pairs parsed by earlier builds: the cluster mode passes one cache to all its builds, a command to
   * its own (the quarantine's retries, both sides of a diff). Absent: the build parses every pair it reads.
   * A build lets go of the pairs of Secrets no longer in its input.
   */
  readonly keyPairs?: KeyPairCache;
  /**
   * The input is manifests as a team keeps them in git (`render` and the other file commands, unless
   * `--strict`): what the cluster provides when they are applied is expected to be missing. A Service
   * without `spec.clusterIP` gets its address from the API server (it is not headless), and a TLS
   * Secret that is not in the input is made there (cert-manager, external-secrets, or by hand); both
   * are rendered with stand-ins (see cluster-provided.ts), the Secret with a warning. Off, both are
   * errors, as in the cluster mode, which reads them.
   */
  readonly expectClusterProvided?: boolean;
  /**
   * Resources to leave out, by `objectId`, with nginx's message: `nginx -t` failed with them in the
   * config (see build/quarantine.ts). Each gets an error diagnostic carrying the message.
   */
  readonly quarantine?: ReadonlyMap<string, string>;
}

/** Where the operator allows snippets: `--allow-snippet-annotations`, `--snippet-namespace`, `--snippet-namespace-selector`. */
export interface SnippetOptions {
  readonly allow: boolean;
  /** With `namespaceSelector`, the scope; all namespaces when both are absent. */
  readonly namespaces?: readonly string[];
  /** Labels a Namespace must carry (all of them). */
  readonly namespaceSelector?: Readonly<Record<string, string>>;
}

/** Everything translate takes from flags, without the nginx it renders for and the clock: what the cluster mode is given. */
export type BaseTranslateOptions = Omit<TranslateOptions, 'now' | 'quarantine' | 'nginxVersion' | 'streamModulePath' | 'stubStatus'>;

/** `Kind/namespace/name` (namespace empty for cluster-scoped kinds): the key of `quarantine`. */
export function objectId(object: SourceObject): string {
  return `${object.kind}/${object.metadata.namespace}/${object.metadata.name}`;
}
