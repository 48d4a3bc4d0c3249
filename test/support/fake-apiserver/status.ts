/**
 * `Status` objects as kube-apiserver writes them for failures (k8s.io/apimachinery/pkg/api/errors),
 * and the error that carries one through the fake's code.
 */

export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

export interface StatusCause {
  readonly reason: string;
  readonly message: string;
  readonly field: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  /** kube-apiserver puts the resource (plural) here for most errors, the kind for Invalid. */
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: { readonly continue?: string };
  readonly status: 'Failure' | 'Success';
  readonly message?: string;
  readonly reason?: string;
  readonly details?: StatusDetails;
  /** Absent on the Success a DELETE answers with, as there. */
  readonly code?: number;
}

export class ApiError extends Error {
  constructor(readonly status: Status) {
    super(status.message);
    this.name = 'ApiError';
  }
}

function failure(code: number, reason: string, message: string, details?: StatusDetails, metadata: Status['metadata'] = {}): ApiError {
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata,
    status: 'Failure',
    message,
    reason,
    ...(details === undefined ? {} : { details }),
    code,
  });
}

/** What errors name: `services`, or `ingresses.networking.k8s.io` (schema.GroupResource.String()). */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

function groupResourceString({ group, resource }: GroupResource): string {
  return group === '' ? resource : `${resource}.${group}`;
}

export function notFound(groupResource: GroupResource, name: string): ApiError {
  return failure(404, 'NotFound', `${groupResourceString(groupResource)} "${name}" not found`, {
    name,
    group: groupResource.group,
    kind: groupResource.resource,
  });
}

/** The answer for a path nothing serves (a group whose CRDs are not installed, say). */
export function pathNotFound(): ApiError {
  return failure(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(groupResource: GroupResource, name: string): ApiError {
  return failure(409, 'AlreadyExists', `${groupResourceString(groupResource)} "${name}" already exists`, {
    name,
    group: groupResource.group,
    kind: groupResource.resource,
  });
}

/** The optimistic-concurrency failure (storage.NewResourceVersionConflictsError as the registry reports it). */
export function conflict(groupResource: GroupResource, name: string): ApiError {
  const why = 'the object has been modified; please apply your changes to the latest version and try again';
  return failure(409, 'Conflict', `Operation cannot be fulfilled on ${groupResourceString(groupResource)} "${name}": ${why}`, {
    name,
    group: groupResource.group,
    kind: groupResource.resource,
  });
}

export function badRequest(message: string): ApiError {
  return failure(400, 'BadRequest', message);
}

export function unauthorized(): ApiError {
  return failure(401, 'Unauthorized', 'Unauthorized');
}

export function methodNotSupported(groupResource: GroupResource, action: string): ApiError {
  return failure(405, 'MethodNotAllowed', `${action} is not supported on resources of kind "${groupResourceString(groupResource)}"`, {
    group: groupResource.group,
    kind: groupResource.resource,
  });
}

export function unsupportedMediaType(accepted: readonly string[]): ApiError {
  return failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
}

export function expired(message: string, continueToken?: string): ApiError {
  return failure(410, 'Expired', message, undefined, continueToken === undefined ? {} : { continue: continueToken });
}

export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return failure(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version', field: '' }],
    retryAfterSeconds: 1,
  });
}

/** A failed validation rule: field.Error in k8s.io/apimachinery/pkg/util/validation/field. */
export interface FieldError {
  readonly type: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueNotSupported' | 'FieldValueDuplicate' | 'FieldValueForbidden';
  readonly field: string;
  /** Already formatted as Go prints it (`"text"` for strings, `0x0` for a uint64 zero). */
  readonly badValue?: string;
  readonly detail?: string;
}

const FIELD_ERROR_TEXT: Record<FieldError['type'], string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
};

function fieldErrorBody(error: FieldError): string {
  // Required and Forbidden never show the value (field.Error.ErrorBody).
  const showsValue = error.type !== 'FieldValueRequired' && error.type !== 'FieldValueForbidden';
  let body = FIELD_ERROR_TEXT[error.type];
  if (showsValue) body += `: ${error.badValue ?? '""'}`;
  if (error.detail) body += `: ${error.detail}`;
  return body;
}

/** Go's %q for the strings we quote in messages. */
export function goQuote(text: string): string {
  return JSON.stringify(text);
}

/** 422 Invalid; `kind`/`group` name the kind (not the resource), as errors.NewInvalid does. */
export function invalid(groupKind: { group: string; kind: string }, name: string, errors: readonly FieldError[]): ApiError {
  const qualifiedKind = groupKind.group === '' ? groupKind.kind : `${groupKind.kind}.${groupKind.group}`;
  // ErrorList.ToAggregate drops repeated messages; an aggregate of one prints bare, more in brackets.
  const messages = [...new Set(errors.map((error) => `${error.field}: ${fieldErrorBody(error)}`))];
  const aggregate = messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`;
  return failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${aggregate}`, {
    name,
    group: groupKind.group,
    kind: groupKind.kind,
    causes: errors.map((error) => ({ reason: error.type, message: fieldErrorBody(error), field: error.field })),
  });
}

/** A JSON patch that cannot be applied (errors.NewGenericServerResponse for 422 drops the detail). */
export function patchNotApplicable(): ApiError {
  return failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
}

const REASON_BY_CODE: Record<number, [string, string]> = {
  400: ['BadRequest', 'the server rejected our request for an unknown reason'],
  401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
  403: ['Forbidden', 'forbidden'],
  404: ['NotFound', 'the server could not find the requested resource'],
  405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
  409: ['Conflict', 'the server reported a conflict'],
  410: ['Expired', 'the resource version is too old'],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
  500: ['InternalError', 'Internal error occurred: injected fault'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
};

/** The Status an injected fault answers with: the reason kube-apiserver uses for that code. */
export function injectedFault(code: number, message?: string): Status {
  const [reason, defaultMessage] = REASON_BY_CODE[code] ?? [code >= 500 ? 'InternalError' : 'Unknown', `injected fault (HTTP ${code})`];
  return failure(code, reason, message ?? defaultMessage, code === 429 || code === 503 ? { retryAfterSeconds: 1 } : undefined).status;
}

export function success(details: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
