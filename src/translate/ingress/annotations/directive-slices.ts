import type { z } from 'zod';
import { goBool, goBoolText, nginxSize, sizeInBytes } from '../../allowlist.js';
import { maxProxyBufferBytes } from './proxy.js';
import type { AnnotationRule } from './rule.js';

/**
 * Annotation families that set one nginx directive, with a ConfigMap key of the same name for the
 * default: each is one slice, registered in `directiveSlices`, and the slice is all there is to it. The
 * annotation parser and the ConfigMap parser read its schema, the catalog (so `audit` and the README's
 * annotation reference) its words, the model carries its value (`ProxyDefaults.directives` from the
 * ConfigMap, `ProxyTuning.directives` from the annotation) and the templates render every one alike.
 */
export interface DirectiveSlice {
  /** Annotation (without the prefix) and ConfigMap key: ingress-nginx names both the same. */
  readonly name: `${string}-${string}`;
  /** The directive: in the http block from the ConfigMap, in the Ingress's locations from the annotation. */
  readonly directive: string;
  /** Parses the raw value into the directive's argument: the allow-list of what reaches nginx. */
  readonly schema: z.ZodType<string>;
  /** What the schema accepts, in words, for the message that rejects a value. */
  readonly accepted: string;
  /** ingress-nginx's ConfigMap default, in words; nginx's own (the same) applies while the ConfigMap does not set it. */
  readonly defaultValue: string;
  /** What it does here, for the catalog. */
  readonly note: string;
  /** Heading of the README section its annotation is listed under. */
  readonly family: string;
}

export const directiveSlices: readonly DirectiveSlice[] = [
  {
    name: 'proxy-max-temp-file-size',
    directive: 'proxy_max_temp_file_size',
    // nginx wants 0, or at least one buffer: from the largest buffer an Ingress may ask for up, it loads with any.
    schema: nginxSize('kmg').refine((size) => sizeInBytes(size) === 0 || sizeInBytes(size) >= maxProxyBufferBytes),
    accepted: 'a size of 0 (no temporary files: a response larger than the buffers is passed on as it arrives) or from 1m, such as 1024m',
    defaultValue: '`1024m`',
    note: 'the most of a response buffered to a temporary file when it does not fit the buffers; sizes between 0 and 1m, which nginx refuses next to larger buffers, are refused',
    family: 'Proxy tuning',
  },
  {
    name: 'relative-redirects',
    directive: 'absolute_redirect',
    // `true` asks for relative redirects: nginx's own redirects (a directory's trailing slash) then name no scheme and host.
    schema: goBool.transform((relative) => (relative ? 'off' : 'on')),
    accepted: goBoolText,
    defaultValue: '`false`',
    note: 'redirects issued by nginx itself (`absolute_redirect off` when `true`) leave out the scheme and host',
    family: 'Paths and redirects',
  },
];

/** The annotations of the slices, by name: absent means the ConfigMap's value (or nginx's default). */
export const directiveAnnotations: { readonly [name: string]: AnnotationRule<string | undefined> } = Object.fromEntries(
  directiveSlices.map((slice) => [slice.name, { name: slice.name, schema: slice.schema, defaultValue: undefined, accepted: slice.accepted }]),
);
