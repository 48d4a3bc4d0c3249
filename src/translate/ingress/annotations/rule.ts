import type { z } from 'zod';

export const annotationPrefix = 'nginx.ingress.kubernetes.io/';

/** How one annotation is read: the whole of what adding an annotation takes, besides its field. */
export interface AnnotationRule<T> {
  /** Annotation name without the prefix, e.g. `ssl-redirect`. */
  readonly name: string;
  /**
   * Older names ingress-nginx still reads when this one is absent (`whitelist-source-range` for
   * `allowlist-source-range`).
   */
  readonly aliases?: readonly string[];
  /** Parses the raw string; a value it rejects is reported and replaced by `defaultValue`. */
  readonly schema: z.ZodType<T>;
  /** The value when the annotation is absent (and, unless `fallbackValue` says otherwise, rejected). */
  readonly defaultValue: T;
  /**
   * The value when the annotation is rejected, where the default would be more permissive than what
   * the user asked for (`cors-allow-origin` defaults to `*`; a typo in it must not allow every origin).
   */
  readonly fallbackValue?: T;
  /** What the schema accepts, in words, for the message that rejects a value. */
  readonly accepted: string;
  /**
   * The annotation guards security (verification, access control, authentication): a rejected value
   * leaves the Ingress out instead of falling back, so that a typo never opens a backend.
   */
  readonly failsClosed?: boolean;
}

/** A family's rules, by field name. */
export type RuleTable = { readonly [field: string]: AnnotationRule<unknown> };

/** The values a family's rules produce, by field name. */
export type ValuesOf<T extends RuleTable> = { -readonly [Field in keyof T]: T[Field] extends AnnotationRule<infer V> ? V : never };

/** Declares a rule with its value type inferred from the schema and the default. */
export function rule<T>(definition: AnnotationRule<T>): AnnotationRule<T> {
  return definition;
}
