import type { FieldPath } from '../../model/diagnostics.js';
import type { Checked } from '../checks/allowlist.js';
import { isHeaderName } from '../checks/allowlist.js';
import type { RequestCondition, RequestMatch } from '../settle/claims.js';
import { checkSafeRegex, pathRegexAlphabet, textRegexAlphabet } from '../checks/safe-regex.js';
import type { HttpRouteMatch } from './schemas.js';

/**
 * An HTTPRoute match's conditions beyond a literal path, as regexes over nginx variables: header values
 * over `$http_<name>`, query parameters over `$args`, the method over `$request_method`, a
 * RegularExpression path over `$uri`. Literal values are written with every character other than a
 * letter or digit as `\xHH`, so no value can end a quoted map key or reach nginx's syntax; regexes from
 * users pass the safe grammar and its cost check first. What cannot be expressed is a problem to report.
 */

const methods: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const maxValueLength = 1024;

export interface MatchProblem {
  readonly message: string;
  readonly field: FieldPath;
}

/** The conditions of `match` besides a literal path (undefined when there are none), or what is wrong with it. */
export function requestMatchOf(match: HttpRouteMatch, field: FieldPath): { ok: true; value: RequestMatch | undefined } | { ok: false; problem: MatchProblem } {
  const conditions: RequestCondition[] = [];
  let pathRegex: string | undefined;
  if (match.path?.type === 'RegularExpression') {
    const value = match.path.value ?? '/';
    const checked = checkSafeRegex(value, pathRegexAlphabet);
    if (!checked.ok) return fail(`the RegularExpression path ${checked.problem}`, [...field, 'path', 'value']);
    pathRegex = value;
    conditions.push({ source: '$uri', regex: `^(?:${value})$` });
  }
  if (match.method !== undefined) {
    if (!methods.has(match.method)) return fail(`method ${JSON.stringify(match.method)} is not one of ${[...methods].join(', ')}`, [...field, 'method']);
    conditions.push({ source: '$request_method', regex: `^${match.method}$` });
  }
  const headers = firstByName(match.headers ?? [], (name) => name.toLowerCase());
  for (const [index, header] of headers) {
    const at: FieldPath = [...field, 'headers', index];
    if (!isHeaderName(header.name)) return fail('header name must be letters, digits and "-" (nginx reads no other header names)', [...at, 'name']);
    const regex = valueRegex(header.type, header.value, textRegexAlphabet);
    if (!regex.ok) return fail(`header ${header.name} value ${regex.problem}`, [...at, 'value']);
    conditions.push({ source: `$http_${header.name.toLowerCase().replaceAll('-', '_')}`, regex: `^${regex.value}$` });
  }
  const queryParams = firstByName(match.queryParams ?? [], (name) => name);
  for (const [index, param] of queryParams) {
    const at: FieldPath = [...field, 'queryParams', index];
    if (!/^[\x21-\x7e]+$/.test(param.name) || /[&=#%]/.test(param.name)) {
      return fail('query parameter name must be printable ASCII without "&", "=", "#" or "%"', [...at, 'name']);
    }
    const regex = valueRegex(param.type, param.value, textRegexAlphabet);
    if (!regex.ok) return fail(`query parameter ${param.name} value ${regex.problem}`, [...at, 'value']);
    // The first parameter of the name decides: skip whole parameters of other names, never backtracking.
    const name = escapedLiteral(param.name);
    conditions.push({ source: '$args', regex: `^(?:(?!${name}=)[^&]*+&)*+${name}=${regex.value}(?:&|$)` });
  }
  if (conditions.length === 0) return { ok: true, value: undefined };
  return {
    ok: true,
    value: {
      key: conditions.map((c) => `${c.source} ${c.regex}`).join('\n'),
      conditions,
      ...(pathRegex !== undefined && { pathRegex }),
      method: match.method !== undefined,
      headers: headers.length,
      queryParams: queryParams.length,
    },
  };
}

function fail(message: string, field: FieldPath): { ok: false; problem: MatchProblem } {
  return { ok: false, problem: { message, field } };
}

/** The Gateway API: of several entries with one name, only the first counts. With their indexes. */
function firstByName<T extends { readonly name: string }>(entries: readonly T[], normalize: (name: string) => string): [number, T][] {
  const seen = new Set<string>();
  const kept: [number, T][] = [];
  entries.forEach((entry, index) => {
    const name = normalize(entry.name);
    if (seen.has(name)) return;
    seen.add(name);
    kept.push([index, entry]);
  });
  return kept;
}

/** A regex (without anchors) for an Exact value or a RegularExpression, as a group. */
function valueRegex(type: string | undefined, value: string, alphabet: typeof textRegexAlphabet): Checked<string> {
  if (type === undefined || type === 'Exact') {
    if (value.length > maxValueLength) return { ok: false, problem: `is longer than ${maxValueLength} characters` };
    if (!/^[\x20-\x7e]*$/.test(value)) return { ok: false, problem: 'has a character that is not printable ASCII' };
    return { ok: true, value: escapedLiteral(value) };
  }
  if (type === 'RegularExpression') {
    const checked = checkSafeRegex(value, alphabet);
    if (!checked.ok) return checked;
    return { ok: true, value: `(?:${value})` };
  }
  return { ok: false, problem: `has match type ${JSON.stringify(type)}, which is not Exact or RegularExpression` };
}

/** Letters and digits as they are, every other character as `\xHH`: a literal in any regex, and inert in nginx syntax. */
export function escapedLiteral(text: string): string {
  return [...text].map((c) => (/[A-Za-z0-9]/.test(c) ? c : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)).join('');
}
