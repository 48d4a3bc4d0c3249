import type { FieldPath } from '../../model/diagnostics.js';
import type { ProxyTuning } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { Reporter } from '../report.js';
import type { HttpRouteRule } from './schemas.js';

/** A Gateway API Duration (GEP-2257): one to four parts of 1–5 digits and a unit. */
const durationPattern = /^(?:[0-9]{1,5}(?:h|m|s|ms)){1,4}$/;
const unitMs: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** Milliseconds of a Gateway API Duration, or undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  if (!durationPattern.test(text)) return undefined;
  let total = 0;
  for (const [, digits, unit] of text.matchAll(/([0-9]+)(ms|h|m|s)/g)) total += Number(digits) * (unitMs[unit as string] as number);
  return total;
}

/** What nginx waits for when a timeout is `0s` (none): a day, since its proxy timeouts cannot be switched off. */
const unlimitedMs = 86_400_000;

/**
 * A rule's `timeouts` in nginx's closest terms. nginx has no timer over a whole request: its proxy
 * timeouts bound each step (connecting, and the gap between two writes or two reads of the backend).
 * So the shorter of `backendRequest` and `request` bounds every step to the backend, and `request`
 * also bounds the time spent trying backends (`proxy_next_upstream_timeout`). A step that times out is
 * answered 504, as the Gateway API asks. `0s` switches a timeout off (a day, for nginx). A value that is
 * not a Duration, or a `backendRequest` longer than `request`, is an error and the timeouts are left
 * out (the controller's defaults apply).
 */
export function ruleTimeouts(object: SourceObject, rule: HttpRouteRule, index: number, report: Reporter): ProxyTuning | undefined {
  const timeouts = rule.timeouts;
  if (timeouts === undefined) return undefined;
  const at: FieldPath = ['spec', 'rules', index, 'timeouts'];
  const read = (field: 'request' | 'backendRequest'): number | null | undefined => {
    const text = timeouts[field];
    if (text === undefined) return undefined;
    const ms = durationMs(text);
    if (ms === undefined) {
      report.error('httproute-timeout-invalid', object, `rule ${index}: timeouts.${field} ${JSON.stringify(text)} is not a duration such as 500ms, 10s or 1m30s; the rule's timeouts are left out`, [...at, field]);
      return null;
    }
    return ms;
  };
  const request = read('request');
  const backendRequest = read('backendRequest');
  if (request === null || backendRequest === null) return undefined;
  if (request !== undefined && request > 0 && backendRequest !== undefined && backendRequest > request) {
    report.error('httproute-timeout-invalid', object, `rule ${index}: timeouts.backendRequest must not be longer than timeouts.request; the rule's timeouts are left out`, [...at, 'backendRequest']);
    return undefined;
  }
  if (request === undefined && backendRequest === undefined) return undefined;
  const bounded = [request, backendRequest].filter((ms): ms is number => ms !== undefined && ms > 0);
  const each = `${bounded.length > 0 ? Math.min(...bounded) : unlimitedMs}ms`;
  return {
    connectTimeout: each,
    sendTimeout: each,
    readTimeout: each,
    ...(request !== undefined && request > 0 && { nextUpstreamTimeout: `${request}ms` }),
  };
}
