/**
 * ConfigMap `use-gzip` and its companions, as ingress-nginx reads them: `gzip-level`, `gzip-min-length`,
 * `gzip-types` (MIME types besides `text/html`, which nginx always compresses once gzip is on) and
 * `gzip-disable` (a regex over the User-Agent, or `msie6`). The values reach nginx checked here.
 */
import { z } from 'zod';
import { checkSafeRegex, textRegexAlphabet } from '../checks/safe-regex.js';

/** ingress-nginx's gzipTypes (internal/ingress/controller/config/config.go). */
export const defaultGzipTypes =
  'application/atom+xml application/javascript application/x-javascript application/json application/rss+xml ' +
  'application/vnd.ms-fontobject application/x-font-ttf application/x-web-app-manifest+json application/xhtml+xml ' +
  'application/xml font/opentype image/svg+xml image/x-icon text/css text/javascript text/plain text/x-component';

const mimeType = /^([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}|\*)$/;

/** Space-separated MIME types (`type/subtype`), or `*` for every type. */
export const gzipTypes = z.string().transform((value, context) => {
  const items = value.split(/\s+/).filter((item) => item !== '');
  if (items.length === 0 || items.length > 128 || !items.every((item) => mimeType.test(item))) {
    context.addIssue({ code: 'custom', message: 'has an item that is not a MIME type' });
    return z.NEVER;
  }
  return [...new Set(items)].join(' ');
});

export const gzipTypesText = 'space-separated MIME types such as text/plain application/json (at most 128), or *';

/** `msie6` (nginx's own shorthand), or a regex in the safe grammar, searched for in the User-Agent. */
export const gzipDisable = z.string().transform((value, context): string | undefined => {
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (trimmed === 'msie6') return trimmed;
  const checked = checkSafeRegex(trimmed, textRegexAlphabet);
  if (!checked.ok) {
    context.addIssue({ code: 'custom', message: checked.problem });
    return z.NEVER;
  }
  return trimmed;
});

export const gzipDisableText = 'msie6, or a regular expression over the User-Agent (letters, digits, spaces, ._~%!&,=:@/<>- and the safe regex syntax)';
