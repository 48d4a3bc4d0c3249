/**
 * The GatewayClass `--gateway-class` names, when it names our controller: whether we accept it, and
 * the status that says so. ingress2nginx takes no parameters: any `parametersRef`, on the class or on a
 * Gateway (`spec.infrastructure.parametersRef`), refers to a kind we do not support, so the spec's
 * answer is `Accepted: False` with reason `InvalidParameters`, and the Gateways it concerns are not served.
 */
import { z } from 'zod';
import type { SourceObject } from '../../sources/snapshot.js';
import type { Condition, GatewayClassStatus } from '../../model/status.js';
import type { Reporter } from '../report.js';
import { parseWith } from '../resources.js';
import { condition } from './conditions.js';
import { gatewayClassSchema, gatewayGroup, gatewayParametersSchema, parametersReference, type ParametersReference } from './schemas.js';

/** The annotation a Gateway API CRD carries its release in. */
export const bundleVersionAnnotation = `${gatewayGroup}/bundle-version`;

/**
 * Releases whose CRDs we read: from v1.0 (GatewayClass, Gateway and HTTPRoute v1) to v1.6, the newest we
 * were checked against. Older versions of a kind (TLSRoute v1alpha2, BackendTLSPolicy v1alpha3) are read
 * as the kind's own rules say.
 */
const supportedMinors = { major: 1, lowest: 0, highest: 6 } as const;
const supportedRange = `v${supportedMinors.major}.${supportedMinors.lowest} to v${supportedMinors.major}.${supportedMinors.highest}`;

const customResourceDefinitionSchema = z.object({ spec: z.object({ group: z.string() }) });

/** Why the Gateways of a class, or one Gateway, are not served: the Gateway's `Accepted: False`. */
export interface GatewayRefusal {
  readonly reason: 'InvalidParameters';
  readonly message: string;
}

export interface GatewayClassDecision {
  /** Only for a class that names our controller: the status is ours to write. */
  readonly status?: GatewayClassStatus;
  /** Set when the class is not accepted: none of its Gateways is served. */
  readonly refusal?: GatewayRefusal;
}

/** A Gateway API CRD and the release its annotation names (undefined: no annotation). */
export interface GatewayApiCrd {
  readonly name: string;
  readonly bundleVersion: string | undefined;
}

/** The CustomResourceDefinitions of the Gateway API group among the objects, by name. */
export function gatewayApiCrds(objects: readonly SourceObject[]): GatewayApiCrd[] {
  return objects
    .filter((object) => object.kind === 'CustomResourceDefinition' && customResourceDefinitionSchema.safeParse(object.raw).data?.spec.group === gatewayGroup)
    .map((object) => ({ name: object.metadata.name, bundleVersion: object.metadata.annotations[bundleVersionAnnotation] }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function isSupportedBundleVersion(version: string | undefined): boolean {
  const match = /^v(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$/.exec(version ?? '');
  if (!match) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major === supportedMinors.major && minor >= supportedMinors.lowest && minor <= supportedMinors.highest;
}

/**
 * `SupportedVersion` from the CRDs' bundle-version annotations: False when any Gateway API CRD has none
 * or one outside the releases we read. Without a CRD to read (manifests from git rarely carry them) there
 * is nothing to judge, and the condition is left out rather than guessed.
 */
export function supportedVersionCondition(crds: readonly GatewayApiCrd[]): Condition | undefined {
  if (crds.length === 0) return undefined;
  const unsupported = crds.filter((crd) => !isSupportedBundleVersion(crd.bundleVersion));
  if (unsupported.length === 0) {
    const versions = [...new Set(crds.map((crd) => crd.bundleVersion))].join(', ');
    return condition('SupportedVersion', 'True', 'SupportedVersion', `Gateway API CRDs of ${versions}; supported: ${supportedRange}`);
  }
  const found = unsupported.map((crd) => `${crd.name} ${crd.bundleVersion === undefined ? 'has no bundle-version annotation' : `is ${crd.bundleVersion}`}`);
  return condition('SupportedVersion', 'False', 'UnsupportedVersion', `${found.join('; ')}; supported: ${supportedRange} (read as far as the objects' versions allow)`);
}

function describeReference(ref: ParametersReference): string {
  const kind = ref.group === '' ? ref.kind : `${ref.kind}.${ref.group}`;
  return `${kind} ${ref.namespace === undefined ? '' : `${ref.namespace}/`}${ref.name}`;
}

/**
 * The decision for the class `--gateway-class` names. A class that names another controller is not ours
 * to judge (its Gateways are still served: the flag selects them, with a warning); a class missing from
 * the input, or malformed, leaves its Gateways served as the flag says.
 */
export function decideGatewayClass(
  object: SourceObject | undefined,
  controllerName: string,
  crds: readonly GatewayApiCrd[],
  report: Reporter,
): GatewayClassDecision {
  if (!object) return {};
  const parsed = parseWith(gatewayClassSchema, object, report);
  if (!parsed) return {};
  const { name } = object.metadata;
  if (parsed.spec.controllerName !== controllerName) {
    report.warning(
      'gateway-class-controller-mismatch',
      object,
      `GatewayClass ${name} names controller "${parsed.spec.controllerName}", not "${controllerName}"; its Gateways are rendered anyway because --gateway-class selects them`,
      ['spec', 'controllerName'],
    );
    return {};
  }
  const ref = parsed.spec.parametersRef ?? undefined;
  const supportedVersion = supportedVersionCondition(crds);
  if (supportedVersion?.status === 'False') report.warning('unsupported-version', object, `${supportedVersion.message}; its Gateways are served all the same`);
  if (ref === undefined) {
    const accepted = condition('Accepted', 'True', 'Accepted', 'GatewayClass is accepted');
    return { status: classStatus(name, accepted, supportedVersion) };
  }
  const message = `parametersRef names ${describeReference(ref)}, and ingress2nginx takes no parameters (no kind is supported)`;
  report.error('invalid-parameters', object, `${message}; no Gateway of this class is served`, ['spec', 'parametersRef']);
  return {
    status: classStatus(name, condition('Accepted', 'False', 'InvalidParameters', message), supportedVersion),
    refusal: { reason: 'InvalidParameters', message: `GatewayClass ${name} is not accepted: ${message}` },
  };
}

function classStatus(name: string, accepted: Condition, supportedVersion: Condition | undefined): GatewayClassStatus {
  return { kind: 'GatewayClass', namespace: '', name, conditions: supportedVersion ? [accepted, supportedVersion] : [accepted] };
}

/**
 * Why one of our Gateways is not served, if it is not: its class is not accepted, or it names parameters
 * of its own (`spec.infrastructure.parametersRef`), which no kind can be.
 */
export function gatewayRefusal(gateway: SourceObject, classRefusal: GatewayRefusal | undefined, report: Reporter): GatewayRefusal | undefined {
  if (classRefusal) {
    // A warning: the fault is the class's (an error there), and an edit of the Gateway stays admissible.
    report.warning('gateway-class-not-accepted', gateway, `${classRefusal.message}; the Gateway is not served`, ['spec', 'gatewayClassName']);
    return classRefusal;
  }
  const own = gatewayParametersSchema.safeParse(gateway.raw).data?.spec.infrastructure?.parametersRef;
  if (own === undefined || own === null) return undefined;
  const parsed = parametersReference.safeParse(own);
  const named = parsed.success ? describeReference(parsed.data) : 'an object';
  const message = `spec.infrastructure.parametersRef names ${named}, and ingress2nginx takes no parameters (no kind is supported)`;
  report.error('invalid-parameters', gateway, `${message}; the Gateway is not served`, ['spec', 'infrastructure', 'parametersRef']);
  return { reason: 'InvalidParameters', message };
}
