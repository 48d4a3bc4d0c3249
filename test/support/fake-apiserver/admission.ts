import { randomUUID } from 'node:crypto';
import https from 'node:https';
import type { ResourceType } from './resources.js';
import { ApiError, badRequest, type JsonObject, type JsonValue } from './status.js';

/**
 * Validating admission webhooks as kube-apiserver calls them (k8s.io/apiserver/pkg/admission/plugin/
 * webhook): every webhook of every stored ValidatingWebhookConfiguration whose rules and
 * namespaceSelector match the request is sent an `admission.k8s.io/v1` AdmissionReview, all at once,
 * at `clientConfig.url` with `?timeout=Ns`, trusting only `caBundle`. A denial fails the request with the
 * webhook's status (at least 400) and "admission webhook NAME denied the request: MESSAGE"; a webhook
 * that cannot be called fails it with 500 under `failurePolicy: Fail` (the default) and is skipped under
 * `Ignore`; a dry-run request is refused by a webhook whose `sideEffects` are not None/NoneOnDryRun.
 * Warnings come back to be sent as `Warning: 299` headers. `clientConfig.service` is not resolved (the
 * fake has no cluster network): such a webhook is a failed call.
 */

export interface AdmissionAttributes {
  readonly type: ResourceType;
  readonly version: string;
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE';
  readonly namespace: string;
  readonly name: string;
  readonly subresource?: string;
  readonly object?: JsonObject;
  readonly oldObject?: JsonObject;
  readonly dryRun: boolean;
}

type Json = Record<string, JsonValue>;
const isObject = (value: JsonValue | undefined): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const strings = (value: JsonValue | undefined): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

function ruleMatches(rule: Json, attributes: AdmissionAttributes): boolean {
  const { type, version, operation } = attributes;
  const any = (list: string[], value: string) => list.includes('*') || list.includes(value);
  const scope = typeof rule['scope'] === 'string' ? rule['scope'] : '*';
  const scopeOk = scope === '*' || (scope === 'Namespaced') === type.namespaced;
  // "*" is every resource but no subresource, "*/*" everything, "ingresses/*" every subresource of one.
  const sub = attributes.subresource;
  const resourceOk = strings(rule['resources']).some((r) => {
    const [resource, subresource] = r.split('/');
    return (resource === '*' || resource === type.resource) && (sub === undefined ? subresource === undefined : subresource === '*' || subresource === sub);
  });
  return any(strings(rule['operations']), operation) && any(strings(rule['apiGroups']), type.group) && any(strings(rule['apiVersions']), version) && resourceOk && scopeOk;
}

/** metav1.LabelSelector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist); empty matches all. */
export function labelSelectorMatches(selector: JsonValue | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!isObject(selector)) return true;
  const matchLabels = isObject(selector['matchLabels']) ? selector['matchLabels'] : {};
  if (!Object.entries(matchLabels).every(([key, value]) => labels[key] === value)) return false;
  const expressions = Array.isArray(selector['matchExpressions']) ? selector['matchExpressions'].filter(isObject) : [];
  return expressions.every((expression) => {
    const key = String(expression['key']);
    const values = strings(expression['values']);
    switch (expression['operator']) {
      case 'In':
        return key in labels && values.includes(labels[key]!);
      case 'NotIn':
        return !(key in labels) || !values.includes(labels[key]!);
      case 'Exists':
        return key in labels;
      case 'DoesNotExist':
        return !(key in labels);
      default:
        throw badRequest(`"${String(expression['operator'])}" is not a valid label selector operator`);
    }
  });
}

/** The webhooks of `configurations` that this request goes to. */
export function matchingWebhooks(configurations: readonly JsonObject[], attributes: AdmissionAttributes, namespaceLabels: Readonly<Record<string, string>> | undefined): Json[] {
  const hooks = configurations.flatMap((configuration) => (Array.isArray(configuration['webhooks']) ? configuration['webhooks'].filter(isObject) : []));
  return hooks.filter((hook) => {
    const rules = Array.isArray(hook['rules']) ? hook['rules'].filter(isObject) : [];
    if (!rules.some((rule) => ruleMatches(rule, attributes))) return false;
    // Cluster-scoped objects (but Namespaces) ignore the namespaceSelector.
    if (!attributes.type.namespaced && attributes.type.resource !== 'namespaces') return true;
    return labelSelectorMatches(hook['namespaceSelector'], namespaceLabels ?? {});
  });
}

function review(attributes: AdmissionAttributes, uid: string): JsonObject {
  const { type, version, operation, namespace, name, object, oldObject, dryRun } = attributes;
  const gvk = { group: type.group, version, kind: type.kind };
  const gvr = { group: type.group, version, resource: type.resource };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name,
      ...(type.namespaced && { namespace }),
      operation,
      userInfo: { username: 'fake-apiserver-user', groups: ['system:authenticated'] },
      object: object ?? null,
      oldObject: oldObject ?? null,
      dryRun,
      options: { kind: `${operation === 'CREATE' ? 'Create' : operation === 'UPDATE' ? 'Update' : 'Delete'}Options`, apiVersion: 'meta.k8s.io/v1' },
    },
  };
}

function post(url: string, caPem: string | undefined, body: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = https.request(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, ...(caPem && { ca: caPem }), agent: false }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => ((response.statusCode ?? 0) === 200 ? resolve(text) : reject(new Error(`the server responded with HTTP ${response.statusCode}: ${text.trim()}`))));
      response.on('error', reject);
    });
    const timer = setTimeout(() => request.destroy(new Error('context deadline exceeded')), timeoutMs);
    request.on('close', () => clearTimeout(timer));
    request.on('error', reject);
    request.end(body);
  });
}

function internalError(message: string): ApiError {
  return new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Internal error occurred: ${message}`, reason: 'InternalError', details: { causes: [{ reason: '', message, field: '' }] }, code: 500 });
}

/** Calls one webhook; resolves with its warnings, rejects with the ApiError the request fails with. */
async function callWebhook(hook: Json, attributes: AdmissionAttributes): Promise<string[]> {
  const name = String(hook['name']);
  const sideEffects = String(hook['sideEffects'] ?? 'Unknown');
  if (attributes.dryRun && sideEffects !== 'None' && sideEffects !== 'NoneOnDryRun') {
    throw badRequest(`admission webhook "${name}" has side effects and does not support dry run`);
  }
  const timeoutSeconds = typeof hook['timeoutSeconds'] === 'number' ? hook['timeoutSeconds'] : 10;
  const client = isObject(hook['clientConfig']) ? hook['clientConfig'] : {};
  const caPem = typeof client['caBundle'] === 'string' ? Buffer.from(client['caBundle'], 'base64').toString('utf8') : undefined;
  const url = typeof client['url'] === 'string' ? `${client['url']}?timeout=${timeoutSeconds}s` : undefined;
  const uid = randomUUID();
  let response: Json;
  try {
    if (url === undefined) throw new Error('clientConfig.service is not resolved by the fake API server; give clientConfig.url');
    const parsed = JSON.parse(await post(url, caPem, JSON.stringify(review(attributes, uid)), timeoutSeconds * 1000)) as JsonValue;
    if (!isObject(parsed) || !isObject(parsed['response'])) throw new Error('expected response in AdmissionReview');
    response = parsed['response'];
    if (response['uid'] !== uid) throw new Error(`expected response.uid="${uid}", got "${String(response['uid'])}"`);
  } catch (error) {
    if (hook['failurePolicy'] === 'Ignore') return [];
    throw internalError(`failed calling webhook "${name}": failed to call webhook: Post "${url ?? name}": ${(error as Error).message}`);
  }
  const warnings = strings(response['warnings']);
  if (response['allowed'] === true) return warnings;
  const status = isObject(response['status']) ? response['status'] : {};
  const code = typeof status['code'] === 'number' && status['code'] >= 400 ? status['code'] : 400;
  const said = typeof status['message'] === 'string' && status['message'] !== '' ? `: ${status['message']}` : typeof status['reason'] === 'string' && status['reason'] !== '' ? `: ${status['reason']}` : ' without explanation';
  throw new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `admission webhook "${name}" denied the request${said}`, reason: typeof status['reason'] === 'string' ? status['reason'] : '', code });
}

/**
 * Runs every matching webhook in parallel: resolves with their warnings when all allow, rejects with
 * the first denial (or failed call) otherwise.
 */
export async function validate(configurations: readonly JsonObject[], attributes: AdmissionAttributes, namespaceLabels: Readonly<Record<string, string>> | undefined): Promise<string[]> {
  const hooks = matchingWebhooks(configurations, attributes, namespaceLabels);
  const results = await Promise.allSettled(hooks.map((hook) => callWebhook(hook, attributes)));
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
  return results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
}

/** A warning as the `Warning` header carries it (RFC 7234 299, the text quoted). */
export function warningHeader(text: string): string {
  return `299 - "${text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, '?')}"`;
}
