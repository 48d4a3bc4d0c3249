import type { IngressSpec, Resources, Typed } from '../resources.js';

const legacyClassAnnotation = 'kubernetes.io/ingress.class';
const defaultClassAnnotation = 'ingressclass.kubernetes.io/is-default-class';

export type ClassDecision =
  | { readonly serve: true }
  | { readonly serve: false; readonly reason: string };

/**
 * The class rules of ingress-nginx: `spec.ingressClassName` first, then the legacy annotation, and an
 * Ingress with neither belongs to us when our IngressClass is the cluster default (or when asked to).
 */
export function ingressClassDecision(
  ingress: Typed<IngressSpec>,
  resources: Resources,
  ingressClass: string,
  watchIngressWithoutClass: boolean,
): ClassDecision {
  const named = ingress.spec.ingressClassName;
  if (named !== undefined) {
    return named === ingressClass
      ? { serve: true }
      : { serve: false, reason: `spec.ingressClassName is "${named}", not "${ingressClass}"` };
  }
  const legacy = ingress.object.metadata.annotations[legacyClassAnnotation];
  if (legacy !== undefined) {
    return legacy === ingressClass
      ? { serve: true }
      : { serve: false, reason: `annotation ${legacyClassAnnotation} is "${legacy}", not "${ingressClass}"` };
  }
  const ours = resources.ingressClasses.get(ingressClass);
  if (ours && ours.object.metadata.annotations[defaultClassAnnotation]?.trim().toLowerCase() === 'true') {
    return { serve: true };
  }
  if (watchIngressWithoutClass) return { serve: true };
  return {
    serve: false,
    reason: `it names no ingress class and IngressClass "${ingressClass}" is not marked default (set spec.ingressClassName, or pass --watch-ingress-without-class)`,
  };
}
