/** What every part of the Ingress front end reads while it turns one Ingress into claims. */
import type { Location, LocationBehaviour, Proxy, ProxyTuning } from '../../model/nginx.js';
import type { BackendPolicy, ResolvedBackend } from '../backends.js';
import type { ReferenceGrants } from '../reference-grants.js';
import type { Reporter } from '../report.js';
import type { Resources } from '../resources.js';
import type { SecretFiles } from '../secrets/secret-files.js';
import type { ClientCertificateRequest } from '../settle/claims.js';
import type { HttpExtensionRegistry } from '../settle/extensions.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ControllerSettings } from './configmap.js';
import type { HeaderDefaults } from './header-configmaps.js';
import type { SnippetScope, SnippetRegistry } from './snippets.js';

export interface IngressContext {
  readonly resources: Resources;
  readonly secrets: SecretFiles;
  readonly report: Reporter;
  readonly backendPolicy: BackendPolicy;
  readonly allowCrossNamespaceSecrets: boolean;
  /** `auth-url` may name another namespace's Service without a ReferenceGrant. */
  readonly allowCrossNamespaceAuthUrl: boolean;
  /** Every backend resolved so far, by upstream name. */
  readonly backends: Map<string, ResolvedBackend>;
  /** The controller ConfigMap: defaults for the annotations. */
  readonly settings: ControllerSettings;
  /** The header ConfigMaps the controller ConfigMap names, and which names `custom-headers` may set. */
  readonly headers: HeaderDefaults;
  /** http-level blocks the locations refer to. */
  readonly extensions: HttpExtensionRegistry;
  /** The client address as access checks see it: `$remote_addr`, or `$i2n_client_addr` behind PROXY protocol with forwarded headers. */
  readonly clientAddress: string;
  /** The rate-limit key for a client: `$binary_remote_addr`, or `$i2n_client_addr`. */
  readonly limitKey: string;
  /** Which cross-namespace references are allowed (auth-url to another namespace's Service). */
  readonly referenceGrants: ReferenceGrants;
  /** Where snippets are allowed, and the allowed snippets of each Ingress. */
  readonly snippetScope: SnippetScope;
  readonly snippets: SnippetRegistry;
  /** The controller ConfigMap (`--configmap`), where what its settings cause is reported. */
  readonly controllerConfigMap?: SourceObject;
  /** The controller's default backend answers the ConfigMap's `custom-http-errors`: every location sets what its pages send. */
  readonly controllerErrorPages: boolean;
}

/** The per-Ingress part of every location of the Ingress. */
export interface IngressBehaviour {
  readonly behaviour: LocationBehaviour;
  /** `custom-headers` names a ConfigMap that cannot be used: the locations answer 503, as ingress-nginx denies them. */
  readonly denied?: true;
  /** Locations the behaviour needs beside its own on each host (the auth endpoint). */
  readonly companions: readonly Location[];
  readonly clientCertificate?: ClientCertificateRequest;
  /** Request headers to the backend besides the standard ones. */
  readonly headers: readonly { readonly name: string; readonly value: string }[];
  /** `upstream-vhost`, else undefined (the client's host is sent). */
  readonly host?: string;
  /** `backend-protocol: FCGI`: its parameters and index. */
  readonly fastcgi?: Proxy['fastcgi'];
  /** `connection-proxy-header`, else undefined (`upgrade` for WebSocket requests, empty otherwise). */
  readonly connectionHeader?: Proxy['connectionHeader'];
  readonly tuning?: ProxyTuning;
  readonly httpVersion: '1.0' | '1.1';
  /** Names of the http-level groups (zones, maps) the behaviour refers to. */
  readonly references: readonly string[];
}
