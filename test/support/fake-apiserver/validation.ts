import { deepEqual, isObject } from './patch.js';
import type { ResourceType } from './resources.js';
import { badRequest, goQuote, type FieldError, type JsonObject, type JsonValue } from './status.js';

/**
 * What kube-apiserver rejects before storing an object: bodies its decoder cannot read (a
 * metav1.MicroTime needs exactly six fractional digits: time.Parse with RFC3339Micro), and the
 * validation rules of the kinds whose rules a controller is likely to trip over (Events, Leases,
 * the metav1.Condition schema of Gateway API statuses).
 */

const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

/** Why Go's time.Parse(RFC3339Micro, value) fails, in its words, or undefined when it parses. */
function microTimeParseError(value: string): string | undefined {
  const whole = `parsing time ${goQuote(value)}`;
  const cannotParse = (rest: string, element: string) => `${whole} as ${goQuote(RFC3339_MICRO)}: cannot parse ${goQuote(rest)} as ${goQuote(element)}`;
  let rest = value;
  const fields: number[] = [];
  // [layout element, digits it takes (fixed), or 0 for a literal]; "15" takes one or two digits.
  const elements: [string, number][] = [['2006', 4], ['-', 0], ['01', 2], ['-', 0], ['02', 2], ['T', 0], ['15', -2], [':', 0], ['04', 2], [':', 0], ['05', 2]];
  for (const [element, digits] of elements) {
    if (digits === 0) {
      if (!rest.startsWith(element)) return cannotParse(rest, element);
      rest = rest.slice(element.length);
      continue;
    }
    const match = (digits > 0 ? new RegExp(`^\\d{${digits}}`) : /^\d\d?/).exec(rest);
    if (!match) return cannotParse(rest, element);
    fields.push(Number(match[0]));
    rest = rest.slice(match[0].length);
  }
  // ".000000" demands exactly as many digits as the layout has.
  if (rest.length < 7) return cannotParse(rest, '.000000');
  if (!/^[.,]\d{6}$/.test(rest.slice(0, 7))) return cannotParse(rest, '.000000');
  rest = rest.slice(7);
  if (rest.startsWith('Z')) rest = rest.slice(1);
  else if (/^[+-]\d\d:\d\d/.test(rest)) rest = rest.slice(6);
  else return cannotParse(rest, 'Z07:00');
  if (rest !== '') return `${whole}: extra text: ${goQuote(rest)}`;
  const [year, month, day, hour, minute, second] = fields as [number, number, number, number, number, number];
  if (month < 1 || month > 12) return `${whole}: month out of range`;
  if (hour > 23) return `${whole}: hour out of range`;
  if (minute > 59) return `${whole}: minute out of range`;
  if (second > 59) return `${whole}: second out of range`;
  if (day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return `${whole}: day out of range`;
  return undefined;
}

function valueAt(object: JsonObject, path: readonly string[]): JsonValue | undefined {
  let current: JsonValue | undefined = object;
  for (const key of path) current = isObject(current) ? current[key] : undefined;
  return current;
}

/** The decoder's 400 for a body it cannot turn into the kind (handlers' transformDecodeError). */
export function checkDecodable(type: ResourceType, version: string, served: JsonObject): void {
  for (const path of type.microTimeFields) {
    const value = valueAt(served, path);
    if (value === undefined || value === null) continue;
    const why =
      typeof value === 'string'
        ? microTimeParseError(value)
        : `json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go struct field ${path.join('.')} of type string`;
    if (why !== undefined) throw badRequest(`${type.kind} in version ${goQuote(version)} cannot be handled as a ${type.kind}: ${why}`);
  }
}

/** The same failure met while applying a patch is a 422 on the field "patch" (patcher.applyPatchToCurrentObject). */
export function decodeProblem(type: ResourceType, served: JsonObject): string | undefined {
  for (const path of type.microTimeFields) {
    const value = valueAt(served, path);
    if (typeof value === 'string') {
      const why = microTimeParseError(value);
      if (why !== undefined) return why;
    }
  }
  return undefined;
}

function present(value: JsonValue | undefined): boolean {
  return value !== undefined && value !== null && value !== '' && value !== 0;
}

function printed(value: JsonValue | undefined): string {
  return typeof value === 'string' ? goQuote(value) : JSON.stringify(value ?? null);
}

const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/**
 * pkg/apis/core/validation/events.go on the stored (core v1) form; `strict` for writes through
 * events.k8s.io/v1, which adds the rules core v1 skips for compatibility. Field paths are the
 * core names (involvedObject, message), as the real server reports them.
 */
export function validateEvent(event: JsonObject, strict: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const metadata = (event.metadata ?? {}) as JsonObject;
  const namespace = String(metadata.namespace ?? '');
  const involvedNamespace = String(valueAt(event, ['involvedObject', 'namespace']) ?? '');
  const hasEventTime = present(event.eventTime);
  if (!hasEventTime) {
    if (involvedNamespace === '' ? namespace !== '' && namespace !== 'default' : namespace !== involvedNamespace) {
      errors.push({ type: 'FieldValueInvalid', field: 'involvedObject.namespace', badValue: goQuote(involvedNamespace), detail: 'does not match event.namespace' });
    }
  } else {
    if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') {
      errors.push({ type: 'FieldValueInvalid', field: 'involvedObject.namespace', badValue: goQuote(involvedNamespace), detail: 'does not match event.namespace' });
    }
    const controller = String(event.reportingComponent ?? '');
    if (controller === '') errors.push({ type: 'FieldValueRequired', field: 'reportingController' });
    if (!QUALIFIED_NAME.test(controller) || controller.length > 316) {
      errors.push({
        type: 'FieldValueInvalid',
        field: 'reportingController',
        badValue: goQuote(controller),
        detail: "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      });
    }
    const lengthRule = (field: string, value: JsonValue | undefined, limit: number, required: boolean) => {
      const text = String(value ?? '');
      if (required && text === '') errors.push({ type: 'FieldValueRequired', field });
      if (text.length > limit) errors.push({ type: 'FieldValueInvalid', field, badValue: '""', detail: `can have at most ${limit} characters` });
    };
    lengthRule('reportingInstance', event.reportingInstance, 128, true);
    lengthRule('action', event.action, 128, true);
    lengthRule('reason', event.reason, 128, true);
    lengthRule('message', event.message, 1024, false);
  }
  if (!strict) return errors;
  if (!present(metadata.name) && !present(metadata.generateName)) {
    errors.push({ type: 'FieldValueRequired', field: 'metadata.name', detail: 'name or generateName is required' });
  }
  errors.push(...validateEventSeries(event));
  if (!hasEventTime) errors.push({ type: 'FieldValueRequired', field: 'eventTime' });
  if (event.type !== 'Normal' && event.type !== 'Warning') {
    errors.push({ type: 'FieldValueInvalid', field: 'type', badValue: '""', detail: `has invalid value: ${String(event.type ?? '')}` });
  }
  for (const field of ['firstTimestamp', 'lastTimestamp', 'count'] as const) {
    if (present(event[field])) errors.push({ type: 'FieldValueInvalid', field, badValue: '""', detail: 'needs to be unset' });
  }
  const source = (event.source ?? {}) as JsonObject;
  if (present(source.component) || present(source.host)) errors.push({ type: 'FieldValueInvalid', field: 'source', badValue: '""', detail: 'needs to be unset' });
  return errors;
}

function validateEventSeries(event: JsonObject): FieldError[] {
  const series = event.series;
  if (!isObject(series)) return [];
  const errors: FieldError[] = [];
  if (typeof series.count !== 'number' || series.count < 2) errors.push({ type: 'FieldValueInvalid', field: 'series.count', badValue: '""', detail: 'should be at least 2' });
  if (!present(series.lastObservedTime)) errors.push({ type: 'FieldValueRequired', field: 'series.lastObservedTime' });
  return errors;
}

const EVENT_IMMUTABLE_FIELDS = ['involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type', 'eventTime', 'action', 'related', 'reportingComponent', 'reportingInstance'];

/** ValidateEventUpdate: through events.k8s.io/v1 only `series` (and metadata) may change. */
export function validateEventUpdate(event: JsonObject, old: JsonObject, strict: boolean): FieldError[] {
  const errors = validateEvent(event, false);
  if (!strict) return errors;
  if (!deepEqual(event.series, old.series)) errors.push(...validateEventSeries(event));
  for (const field of EVENT_IMMUTABLE_FIELDS) {
    if (!deepEqual(event[field], old[field])) {
      errors.push({ type: 'FieldValueInvalid', field: field === 'reportingComponent' ? 'reportingController' : field, badValue: printed(event[field]), detail: 'field is immutable' });
    }
  }
  return errors;
}

/** pkg/apis/coordination/validation: the spec numbers a Lease may not have. */
export function validateLease(lease: JsonObject): FieldError[] {
  const spec = (lease.spec ?? {}) as JsonObject;
  const errors: FieldError[] = [];
  if (typeof spec.leaseDurationSeconds === 'number' && spec.leaseDurationSeconds <= 0) {
    errors.push({ type: 'FieldValueInvalid', field: 'spec.leaseDurationSeconds', badValue: String(spec.leaseDurationSeconds), detail: 'must be greater than 0' });
  }
  if (typeof spec.leaseTransitions === 'number' && spec.leaseTransitions < 0) {
    errors.push({ type: 'FieldValueInvalid', field: 'spec.leaseTransitions', badValue: String(spec.leaseTransitions), detail: 'must be greater than or equal to 0' });
  }
  return errors;
}

const CONDITION_TYPE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const DATE_TIME = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/;

function validateConditions(conditions: JsonValue[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seenTypes = new Set<string>();
  conditions.forEach((condition, index) => {
    const at = `${path}[${index}]`;
    if (!isObject(condition)) {
      errors.push({ type: 'FieldValueInvalid', field: at, badValue: printed(condition), detail: `${at} in body must be of type object: "${typeof condition}"` });
      return;
    }
    for (const required of ['lastTransitionTime', 'message', 'reason', 'status', 'type']) {
      if (condition[required] === undefined) errors.push({ type: 'FieldValueRequired', field: `${at}.${required}` });
    }
    const { type, status, reason, message, lastTransitionTime, observedGeneration } = condition;
    if (typeof type === 'string') {
      if (type.length > 316) errors.push({ type: 'FieldValueInvalid', field: `${at}.type`, badValue: goQuote(type), detail: 'may not be longer than 316' });
      if (!CONDITION_TYPE.test(type)) errors.push({ type: 'FieldValueInvalid', field: `${at}.type`, badValue: goQuote(type), detail: `${at}.type in body should match '${CONDITION_TYPE.source}'` });
      if (seenTypes.has(type)) errors.push({ type: 'FieldValueDuplicate', field: `${path}[${index}]`, badValue: `map[string]interface {}{"type":${goQuote(type)}}` });
      seenTypes.add(type);
    }
    if (status !== undefined && status !== 'True' && status !== 'False' && status !== 'Unknown') {
      errors.push({ type: 'FieldValueNotSupported', field: `${at}.status`, badValue: printed(status), detail: 'supported values: "True", "False", "Unknown"' });
    }
    if (typeof reason === 'string' && (!CONDITION_REASON.test(reason) || reason.length > 1024)) {
      errors.push({ type: 'FieldValueInvalid', field: `${at}.reason`, badValue: goQuote(reason), detail: `${at}.reason in body should match '${CONDITION_REASON.source}'` });
    }
    if (typeof message === 'string' && message.length > 32768) {
      errors.push({ type: 'FieldValueInvalid', field: `${at}.message`, badValue: '""', detail: 'may not be longer than 32768' });
    }
    if (lastTransitionTime !== undefined && (typeof lastTransitionTime !== 'string' || !DATE_TIME.test(lastTransitionTime))) {
      errors.push({ type: 'FieldValueInvalid', field: `${at}.lastTransitionTime`, badValue: printed(lastTransitionTime), detail: `${at}.lastTransitionTime in body must be of type date-time: ${printed(lastTransitionTime)}` });
    }
    if (observedGeneration !== undefined && (typeof observedGeneration !== 'number' || observedGeneration < 0)) {
      errors.push({ type: 'FieldValueInvalid', field: `${at}.observedGeneration`, badValue: printed(observedGeneration), detail: `${at}.observedGeneration in body should be greater than or equal to 0` });
    }
  });
  return errors;
}

/** Every `conditions` list under `.status` of a Gateway API object follows the metav1.Condition schema. */
export function validateStatusConditions(stored: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const walk = (value: JsonValue | undefined, path: string) => {
    if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${path}[${index}]`));
    else if (isObject(value)) {
      for (const [key, child] of Object.entries(value)) {
        if (key === 'conditions' && Array.isArray(child)) errors.push(...validateConditions(child, `${path}.${key}`));
        else walk(child, `${path}.${key}`);
      }
    }
  };
  walk(stored.status, 'status');
  return errors;
}
