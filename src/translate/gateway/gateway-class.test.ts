import { describe, expect, it } from 'vitest';
import type { SourceObject } from '../../sources/snapshot.js';
import { Reporter } from '../report.js';
import { codes, conditions, gateway, gatewayStatus, object, parentConditions, passthrough, runPlan, service, tlsRoute, v1 } from '../../../test/support/gateway.js';
import { decideGatewayClass, gatewayApiCrds, gatewayRefusal, isSupportedBundleVersion, supportedVersionCondition } from './gateway-class.js';

const controller = 'ingress2nginx.dev/controller';

function gatewayClass(name: string, spec: Record<string, unknown>): SourceObject {
  return object(v1, 'GatewayClass', '', name, { spec });
}

function crd(plural: string, annotations: Record<string, string>, group = 'gateway.networking.k8s.io'): SourceObject {
  const name = `${plural}.${group}`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name, namespace: '', annotations, labels: {}, creationTimestamp: '' },
    raw: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name, annotations }, spec: { group } },
  };
}

const bundle = (version: string) => ({ 'gateway.networking.k8s.io/bundle-version': version });

describe('bundle versions (SupportedVersion)', () => {
  it.each([
    ['v1.0.0', true],
    ['v1.4.1', true],
    ['v1.6.1', true],
    ['v1.5.0-rc.2', true],
    ['v1.7.0', false],
    ['v0.8.1', false],
    ['v2.0.0', false],
    ['v0.0.0-dev', false],
    ['1.4.0', false],
    [undefined, false],
  ])('%s supported: %s', (version, supported) => {
    expect(isSupportedBundleVersion(version)).toBe(supported);
  });

  it('reads only the Gateway API group\'s CRDs, sorted by name', () => {
    const crds = gatewayApiCrds([crd('httproutes', bundle('v1.4.0')), crd('certificates', bundle('v9.9.9'), 'cert-manager.io'), crd('gateways', {})]);
    expect(crds).toEqual([
      { name: 'gateways.gateway.networking.k8s.io', bundleVersion: undefined },
      { name: 'httproutes.gateway.networking.k8s.io', bundleVersion: 'v1.4.0' },
    ]);
  });

  it('is True when every CRD is of a supported release, False naming those that are not, and left out with no CRD to read', () => {
    expect(supportedVersionCondition([])).toBeUndefined();
    expect(supportedVersionCondition(gatewayApiCrds([crd('gateways', bundle('v1.4.0')), crd('httproutes', bundle('v1.4.0'))]))).toMatchObject({
      status: 'True',
      reason: 'SupportedVersion',
      message: expect.stringContaining('v1.4.0'),
    });
    const mixed = supportedVersionCondition(gatewayApiCrds([crd('gateways', bundle('v1.4.0')), crd('httproutes', {}), crd('tlsroutes', bundle('v1.9.0'))]));
    expect(mixed).toMatchObject({ status: 'False', reason: 'UnsupportedVersion' });
    expect(mixed?.message).toContain('httproutes.gateway.networking.k8s.io has no bundle-version annotation');
    expect(mixed?.message).toContain('tlsroutes.gateway.networking.k8s.io is v1.9.0');
    expect(mixed?.message).not.toContain('gateways.gateway.networking.k8s.io');
  });
});

describe('the GatewayClass --gateway-class names', () => {
  it('is Accepted, with SupportedVersion from the CRDs, when it names our controller without parameters', () => {
    const report = new Reporter();
    const decision = decideGatewayClass(gatewayClass('ingress2nginx', { controllerName: controller }), controller, gatewayApiCrds([crd('gateways', bundle('v1.3.0'))]), report);
    expect(decision.refusal).toBeUndefined();
    expect(decision.status).toMatchObject({ kind: 'GatewayClass', namespace: '', name: 'ingress2nginx' });
    expect(conditions(decision.status!.conditions)).toEqual({ Accepted: 'True/Accepted', SupportedVersion: 'True/SupportedVersion' });
    expect(report.diagnostics).toEqual([]);
  });

  it('stays Accepted (best effort) when a CRD is of a release we do not know, with a warning', () => {
    const report = new Reporter();
    const decision = decideGatewayClass(gatewayClass('ingress2nginx', { controllerName: controller }), controller, gatewayApiCrds([crd('gateways', bundle('v0.0.0-dev'))]), report);
    expect(conditions(decision.status!.conditions)).toEqual({ Accepted: 'True/Accepted', SupportedVersion: 'False/UnsupportedVersion' });
    expect(decision.refusal).toBeUndefined();
    expect(codes(report.diagnostics)).toEqual(['warning:unsupported-version']);
  });

  it('is not Accepted (InvalidParameters) with any parametersRef: no parameters kind is supported, so its Gateways are refused', () => {
    const report = new Reporter();
    const parametersRef = { group: '', kind: 'ConfigMap', name: 'settings', namespace: 'infra' };
    const decision = decideGatewayClass(gatewayClass('ingress2nginx', { controllerName: controller, parametersRef }), controller, [], report);
    expect(conditions(decision.status!.conditions)).toEqual({ Accepted: 'False/InvalidParameters' });
    expect(decision.status!.conditions[0]!.message).toContain('ConfigMap infra/settings');
    expect(decision.refusal).toMatchObject({ reason: 'InvalidParameters', message: expect.stringContaining('GatewayClass ingress2nginx is not accepted') });
    expect(report.diagnostics).toMatchObject([{ severity: 'error', code: 'invalid-parameters', field: 'spec.parametersRef' }]);
  });

  it('of another controller gets no status from us, and a warning; a class not in the input decides nothing', () => {
    const report = new Reporter();
    expect(decideGatewayClass(gatewayClass('ingress2nginx', { controllerName: 'example.net/other' }), controller, [], report)).toEqual({});
    expect(codes(report.diagnostics)).toEqual(['warning:gateway-class-controller-mismatch']);
    expect(decideGatewayClass(undefined, controller, [], new Reporter())).toEqual({});
  });
});

describe('other GatewayClasses', () => {
  it('of our controller get their status too (GatewayClassObservedGenerationBump), whose Gateways --gateway-class does not serve; of another controller none', () => {
    const ours = gatewayClass('ingress2nginx', { controllerName: controller });
    const second = gatewayClass('observed-generation-bump', { controllerName: controller });
    const refused = gatewayClass('with-parameters', { controllerName: controller, parametersRef: { group: 'example.net', kind: 'Settings', name: 'x' } });
    const theirs = gatewayClass('theirs', { controllerName: 'example.net/other' });
    const { plan } = runPlan([ours, second, refused, theirs]);
    const classes = plan.statuses.filter((s) => s.kind === 'GatewayClass');
    expect(Object.fromEntries(classes.map((s) => [s.name, conditions(s.conditions)]))).toEqual({
      ingress2nginx: { Accepted: 'True/Accepted' },
      'observed-generation-bump': { Accepted: 'True/Accepted' },
      'with-parameters': { Accepted: 'False/InvalidParameters' },
    });
  });
});

describe('CRDs in the input', () => {
  it('give the class its SupportedVersion; CRDs of other groups, of either apiextensions version, are read quietly', () => {
    const cls = gatewayClass('ingress2nginx', { controllerName: controller });
    const other = { ...crd('certificates', {}, 'cert-manager.io'), apiVersion: 'apiextensions.k8s.io/v1beta1' };
    const { plan, diagnostics } = runPlan([cls, crd('gateways', bundle('v1.2.1')), crd('httproutes', bundle('v1.2.1')), other]);
    const status = plan.statuses.find((s) => s.kind === 'GatewayClass');
    expect(status && conditions(status.conditions)).toEqual({ Accepted: 'True/Accepted', SupportedVersion: 'True/SupportedVersion' });
    expect(diagnostics).toEqual([]);
  });
});

describe('a Gateway\'s own parameters (GatewayInvalidParametersRef)', () => {
  const http = [{ name: 'http', port: 80, protocol: 'HTTP' }];

  it('refuses a Gateway with spec.infrastructure.parametersRef, and one of a class that is not accepted', () => {
    const report = new Reporter();
    const own = object(v1, 'Gateway', 'infra', 'own', { spec: { gatewayClassName: 'ingress2nginx', listeners: http, infrastructure: { parametersRef: { group: 'invalid.io', kind: 'InvalidParameters', name: 'invalid' } } } });
    expect(gatewayRefusal(own, undefined, report)).toMatchObject({ reason: 'InvalidParameters', message: expect.stringContaining('InvalidParameters.invalid.io invalid') });
    const plain = gateway('infra', 'plain', http);
    expect(gatewayRefusal(plain, undefined, report)).toBeUndefined();
    const classRefusal = { reason: 'InvalidParameters', message: 'GatewayClass ingress2nginx is not accepted: …' } as const;
    expect(gatewayRefusal(plain, classRefusal, report)).toBe(classRefusal);
    expect(report.diagnostics.map((d) => `${d.resource?.name} ${d.severity} ${d.code} ${d.field}`)).toEqual([
      'own error invalid-parameters spec.infrastructure.parametersRef',
      'plain warning gateway-class-not-accepted spec.gatewayClassName',
    ]);
  });

  it('takes a refused Gateway out of the plan: Accepted False/InvalidParameters, not programmed, no traffic, its routes find no parent', () => {
    const refused = object(v1, 'Gateway', 'infra', 'gw', {
      spec: { gatewayClassName: 'ingress2nginx', listeners: [passthrough('tls', 443, '*.example.com')], infrastructure: { parametersRef: { group: 'invalid.io', kind: 'InvalidParameters', name: 'invalid' } } },
    });
    const { plan } = runPlan([refused, tlsRoute('infra', 'app', { hostnames: ['app.example.com'] }), service('infra', 'app', '10.0.0.1', [{ port: 8443 }])]);
    expect(conditions(gatewayStatus(plan, 'infra', 'gw').conditions)).toEqual({ Accepted: 'False/InvalidParameters', Programmed: 'False/Invalid' });
    expect(gatewayStatus(plan, 'infra', 'gw').listeners).toEqual([]);
    expect(plan.ports).toEqual([]);
    expect(parentConditions(plan, 'infra', 'app')).toMatchObject({ Accepted: 'False/NoMatchingParent' });
  });

  it('serves no Gateway of a class with parametersRef, and reports the class status beside the Gateways\'', () => {
    const cls = gatewayClass('ingress2nginx', { controllerName: controller, parametersRef: { group: 'example.net', kind: 'Settings', name: 'x' } });
    const { plan } = runPlan([cls, gateway('infra', 'gw', [passthrough('tls', 443, '*.example.com')]), tlsRoute('infra', 'app', { hostnames: ['app.example.com'] })]);
    expect(plan.statuses.map((s) => `${s.kind}/${s.namespace}/${s.name}`)).toEqual(['Gateway/infra/gw', 'GatewayClass//ingress2nginx', 'TLSRoute/infra/app']);
    expect(conditions(gatewayStatus(plan, 'infra', 'gw').conditions)).toEqual({ Accepted: 'False/InvalidParameters', Programmed: 'False/Invalid' });
    expect(plan.ports).toEqual([]);
  });
});

describe('--gateway naming a Gateway this data plane cannot serve', () => {
  it('warns when it is not in the input, or not of the class --gateway-class names, and serves the rest', () => {
    const http = [{ name: 'http', port: 80, protocol: 'HTTP' }];
    const theirs = object(v1, 'Gateway', 'infra', 'theirs', { spec: { gatewayClassName: 'other', listeners: http } });
    const { plan, diagnostics } = runPlan([gateway('infra', 'ours', http), theirs], { servedGateways: new Set(['infra/ours', 'infra/theirs', 'infra/gone']) });
    expect(conditions(gatewayStatus(plan, 'infra', 'ours').conditions)).toMatchObject({ Accepted: 'True/Accepted' });
    expect(diagnostics.filter((d) => d.code === 'served-gateway-missing').map((d) => d.message)).toEqual([
      '--gateway infra/gone is not in the input: this data plane serves nothing for it',
      '--gateway infra/theirs is not of class ingress2nginx (--gateway-class): this data plane serves nothing for it',
    ]);
  });
});
