import { randomUUID } from 'node:crypto';
import type { JsonObject } from './fake-apiserver.js';

/** Test objects and AdmissionReviews as kube-apiserver sends them to a validating webhook. */

export function testIngress(
  namespace: string,
  name: string,
  host: string,
  extra: { annotations?: Record<string, string>; className?: string; creationTimestamp?: string; service?: string } = {},
): JsonObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      namespace,
      ...(extra.annotations && { annotations: extra.annotations }),
      ...(extra.creationTimestamp && { creationTimestamp: extra.creationTimestamp }),
    },
    spec: {
      ingressClassName: extra.className ?? 'nginx',
      rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: extra.service ?? 'web', port: { number: 80 } } } }] } }],
    },
  };
}

export function testService(namespace: string, name = 'web'): JsonObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { clusterIP: '10.0.0.1', ports: [{ port: 80 }] } };
}

export const refusedSnippet = { 'nginx.ingress.kubernetes.io/configuration-snippet': "more_set_headers 'X-Team: a';" };
export const unknownAnnotation = { 'nginx.ingress.kubernetes.io/no-such-annotation': 'x' };

export function admissionReview(
  object: JsonObject | undefined,
  more: { operation?: string; oldObject?: JsonObject; kind?: { group: string; version: string; kind: string }; dryRun?: boolean } = {},
): JsonObject {
  const metadata = (object ?? more.oldObject)?.['metadata'] as { name?: string; namespace?: string } | undefined;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: more.kind ?? { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
      resource: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
      name: metadata?.name ?? '',
      namespace: metadata?.namespace ?? '',
      operation: more.operation ?? 'CREATE',
      userInfo: { username: 'tester' },
      ...(object && { object }),
      ...(more.oldObject && { oldObject: more.oldObject }),
      dryRun: more.dryRun ?? false,
    },
  };
}
