import type { z } from 'zod';

export const annotationPrefix = 'nginx.ingress.kubernetes.io/';

/** How one annotation is read: the whole of what adding an annotation takes, besides its field. */
export interface AnnotationRule<T> {
  /** Annotation name without the prefix, e.g. `ssl-redirect`. */
  readonly name: string;
  /** Parses the raw string; a value it rejects is reported and replaced by `defaultValue`. */
  readonly schema: z.ZodType<T>;
  /** The value when the annotation is absent or rejected. */
  readonly defaultValue: T;
  /** What the schema accepts, in words, for the message that rejects a value. */
  readonly accepted: string;
}
