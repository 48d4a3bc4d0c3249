import type { z } from 'zod';

export const annotationPrefix = 'nginx.ingress.kubernetes.io/';

/** The headings the annotation reference lists annotations under, in its order. */
export const sections = [
  'TLS and backends',
  'Access control',
  'Canaries',
  'Paths and redirects',
  'Proxy tuning',
  'CORS',
  'Error pages',
  'Load balancing and affinity',
  'Logging, tracing, WAF',
  'Snippets',
] as const;
export type Section = (typeof sections)[number];

/**
 * How one annotation is read, and how the catalog (so `audit` and the annotation reference) describes
 * it: the whole of what adding an annotation takes, besides its field.
 */
export interface AnnotationRule<T> {
  /** Annotation name without the prefix, e.g. `ssl-redirect`. */
  readonly name: string;
  /**
   * Older names ingress-nginx still reads when this one is absent (`whitelist-source-range` for
   * `allowlist-source-range`). The catalog lists each with this rule's section, status and default.
   */
  readonly aliases?: readonly string[];
  /** The catalog's note for the aliases. */
  readonly aliasNote?: string;
  /** The reference heading it is listed under. */
  readonly section: Section;
  /** `differs`: rendered with a difference from ingress-nginx on purpose, which `note` states. */
  readonly status: 'supported' | 'differs';
  /** What it does here, for the catalog; for `differs`, how it differs. */
  readonly note: string;
  /**
   * The ConfigMap key whose value applies while the annotation is absent: the catalog gives that key's
   * default (`defaultValue` is then `undefined`, the translator reads the ConfigMap).
   */
  readonly configMapKey?: string;
  /** The default in words, where `defaultValue` (or `configMapKey`) does not say it as the catalog should. */
  readonly defaultWords?: string;
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
  /**
   * Other spellings ingress-nginx's parser gives a meaning, lowercased, with the spelling of ours they
   * mean (`false` for `off` where its parser falls back to `off`): read as that, with an info.
   */
  readonly spellings?: Readonly<Record<string, string>>;
}

/** A family's rules, by field name. */
export type RuleTable = { readonly [field: string]: AnnotationRule<unknown> };

/** The values a family's rules produce, by field name. */
export type ValuesOf<T extends RuleTable> = { -readonly [Field in keyof T]: T[Field] extends AnnotationRule<infer V> ? V : never };

/** Declares a rule with its value type inferred from the schema and the default. */
export function rule<T>(definition: AnnotationRule<T>): AnnotationRule<T> {
  return definition;
}
