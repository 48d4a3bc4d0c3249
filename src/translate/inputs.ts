import type { TlsFiles } from '../model/files.js';
import type { Snapshot, SourceObject } from '../sources/snapshot.js';
import type { BackendPolicy } from './backends.js';
import { SecretOrigins } from './cluster-provided.js';
import { resolvesEndpoints } from './endpoints.js';
import { bundledDefaultCertificate, bundledDefaultKey } from './secrets/default-certificate.js';
import { gatewayKinds } from './gateway/index.js';
import { ReferenceGrants, referenceGrantSchema } from './reference-grants.js';
import { defaultControllerSettings, parseControllerSettings, type ControllerSettings } from './ingress/configmap.js';
import { objectId, type TranslateOptions } from './options.js';
import { Reporter } from './report.js';
import { IndexMemo, indexResources, withoutDuplicates, type Resources } from './resources.js';
import { SecretFiles } from './secrets/secret-files.js';
import { KeyPairCache } from './secrets/key-pairs.js';
import { headerDefaults, type HeaderDefaults } from './ingress/header-configmaps.js';
import { forwardedTrustWarnings } from './ingress/forwarded-trust.js';
import { ingressSnippetScope, withoutSnippetKeys, configMapSnippets, type ConfigMapSnippets, type SnippetScope } from './ingress/snippets.js';

/** What every front end reads: the objects left after duplicates and quarantine, indexed, and the settings. */
export interface Inputs {
  readonly objects: readonly SourceObject[];
  readonly resources: Resources;
  readonly settings: ControllerSettings;
  readonly secrets: SecretFiles;
  readonly defaultTls: TlsFiles;
  readonly backendPolicy: BackendPolicy;
  /** Where snippets are allowed, and the controller ConfigMap's own allowed snippets (ingress/snippets.ts). */
  readonly snippetScope: SnippetScope;
  readonly configMapSnippets: ConfigMapSnippets;
  /** The header ConfigMaps the controller ConfigMap names. */
  readonly headers: HeaderDefaults;
  /** Which cross-namespace references are allowed; read quietly (the Gateway API front end reports malformed ones). */
  readonly referenceGrants: ReferenceGrants;
}

/**
 * The objects every stage reads, less duplicates and what nginx rejected, indexed; the controller's
 * settings, the Secrets' files and the default certificate.
 */
export function readInputs(snapshot: Snapshot, options: TranslateOptions, report: Reporter, index?: IndexMemo): Inputs {
  const objects = withoutQuarantined(withoutDuplicates(snapshot.objects, report, index), options.quarantine, report);
  const isGatewayKind = (object: SourceObject) => Object.hasOwn(gatewayKinds, object.kind);
  const resources = indexResources({ objects: objects.filter((o) => !isGatewayKind(o)) }, report, index);
  const { settings, snippets: configMapSnippetTexts, snippetScope } = controllerSettings(objects, resources, options, report);
  const keyPairs = options.keyPairs ?? new KeyPairCache();
  keyPairs.retain(resources.secrets);
  const secrets = new SecretFiles(resources, options.now, keyPairs, options.expectClusterProvided ? new SecretOrigins(objects, new Set(options.quarantine?.keys())) : undefined);
  const defaultTls = defaultCertificate(resources, options, secrets, report);
  secrets.useAsStandIn(defaultTls);
  const backendPolicy: BackendPolicy = {
    clusterDomain: options.clusterDomain,
    runtimeDns: (options.resolvers ?? []).length > 0,
    externalNameDisabled: options.disableExternalName ?? false,
    externalNameSuffixes: options.externalNameSuffixes ?? [],
    endpoints: options.upstreams === 'endpoints',
    resolvedEndpoints: resolvesEndpoints(options),
    clusterAssignsAddresses: options.expectClusterProvided ?? false,
    trustedCaBundle: options.systemCaBundle,
  };
  const controller = options.configMap === undefined ? undefined : resources.configMaps.get(options.configMap)?.object;
  const headers = headerDefaults(settings, resources, controller, report);
  const referenceGrants = new ReferenceGrants(
    objects.filter((object) => object.kind === 'ReferenceGrant').flatMap((object) => {
      const parsed = referenceGrantSchema.safeParse(object.raw);
      return parsed.success ? [{ object, spec: parsed.data.spec }] : [];
    }),
  );
  return { objects, resources, settings, secrets, defaultTls, backendPolicy, snippetScope, configMapSnippets: configMapSnippetTexts, headers, referenceGrants };
}

/** Leaves out what nginx rejected (build/quarantine.ts), each with an error that carries nginx's words. */
function withoutQuarantined(
  objects: readonly SourceObject[],
  quarantine: ReadonlyMap<string, string> | undefined,
  report: Reporter,
): SourceObject[] {
  if (!quarantine || quarantine.size === 0) return [...objects];
  return objects.filter((object) => {
    const message = quarantine.get(objectId(object));
    if (message === undefined) return true;
    report.error(
      'nginx-rejected',
      object,
      `nginx -t fails with this ${object.kind} in the config (nginx: ${message}); it is left out so that everything else is served. Fix it and render again`,
    );
    return false;
  });
}

/** The controller ConfigMap's settings, and where snippets are allowed (its keys and the flags), with its own allowed snippets. */
function controllerSettings(
  objects: readonly SourceObject[],
  resources: Resources,
  options: TranslateOptions,
  report: Reporter,
): { settings: ControllerSettings; snippets: ConfigMapSnippets; snippetScope: SnippetScope } {
  const defaults = { settings: defaultControllerSettings, snippets: {}, snippetScope: ingressSnippetScope(objects, defaultControllerSettings, options) };
  if (options.configMap === undefined) return defaults;
  const configMap = resources.configMaps.get(options.configMap);
  if (!configMap) {
    report.warning('configmap-not-found', undefined, `ConfigMap ${options.configMap} (--configmap) is not in the input; using defaults`);
    return defaults;
  }
  const parsed = parseControllerSettings(configMap.spec);
  const scope = ingressSnippetScope(objects, parsed.value, options);
  for (const issue of withoutSnippetKeys(parsed.issues, scope)) report.add(issue.severity, issue.code, configMap.object, issue.message, ['data', issue.key]);
  const snippets = configMapSnippets(configMap.spec, scope);
  for (const problem of snippets.problems) report.error('snippet-invalid', configMap.object, problem.message, ['data', problem.key]);
  forwardedTrustWarnings(parsed.value, configMap.object, report);
  return { settings: parsed.value, snippets: snippets.snippets, snippetScope: scope };
}

function defaultCertificate(resources: Resources, options: TranslateOptions, secrets: SecretFiles, report: Reporter): TlsFiles {
  if (options.defaultCertificate !== undefined) {
    const [namespace = '', name = ''] = options.defaultCertificate.split('/');
    const checked = secrets.serverCertificate({ namespace, name }, undefined);
    if (checked.ok) return checked.value;
    const secret = resources.secrets.get(options.defaultCertificate);
    report.error(
      'default-certificate-invalid',
      secret?.object,
      `${checked.problem} (--default-certificate); using the bundled self-signed certificate instead`,
    );
  }
  return secrets.fixedKeyPair('default', bundledDefaultCertificate, bundledDefaultKey);
}

