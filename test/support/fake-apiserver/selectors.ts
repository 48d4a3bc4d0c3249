import type { ResourceType } from './resources.js';
import { badRequest, type JsonObject } from './status.js';

/**
 * Label and field selectors with the grammar and meaning of k8s.io/apimachinery/pkg/labels and
 * pkg/fields: `!=` and `notin` also match objects without the label; unknown field labels are a
 * 400 from the server.
 */

export type Selector = (labels: Readonly<Record<string, string>>, fields: Readonly<Record<string, string>>) => boolean;

type Requirement = (values: Readonly<Record<string, string>>) => boolean;

/** Splits on commas that are outside parentheses and not escaped with a backslash. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === '\\' && index + 1 < text.length) {
      current += char + text[index + 1];
      index++;
      continue;
    }
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function labelRequirement(text: string): Requirement {
  const trimmed = text.trim();
  const fail = (why: string) => badRequest(`unable to parse requirement: ${why}`);
  const checkKey = (key: string) => {
    if (!LABEL_KEY.test(key)) throw fail(`invalid label key "${key}"`);
    return key;
  };
  const checkValue = (value: string) => {
    if (!LABEL_VALUE.test(value) || value.length > 63) throw fail(`invalid label value: "${value}"`);
    return value;
  };
  let match = /^!\s*(\S+)$/.exec(trimmed);
  if (match) {
    const key = checkKey(match[1]!);
    return (labels) => !(key in labels);
  }
  match = /^(\S+?)\s+(in|notin)\s*\((.*)\)$/.exec(trimmed);
  if (match) {
    const key = checkKey(match[1]!);
    const values = new Set(match[3]!.split(',').map((value) => checkValue(value.trim())));
    return match[2] === 'in' ? (labels) => key in labels && values.has(labels[key]!) : (labels) => !(key in labels) || !values.has(labels[key]!);
  }
  match = /^([^=!<>\s]+)\s*(==|=|!=|<|>)\s*(\S*)$/.exec(trimmed);
  if (match) {
    const key = checkKey(match[1]!);
    const operator = match[2]!;
    const value = match[3]!;
    if (operator === '<' || operator === '>') {
      if (!/^-?\d+$/.test(value)) throw fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
      const bound = Number(value);
      return (labels) => {
        if (!(key in labels) || !/^-?\d+$/.test(labels[key]!)) return false;
        return operator === '<' ? Number(labels[key]) < bound : Number(labels[key]) > bound;
      };
    }
    checkValue(value);
    return operator === '!=' ? (labels) => labels[key] !== value : (labels) => labels[key] === value;
  }
  if (/^\S+$/.test(trimmed)) {
    const key = checkKey(trimmed);
    return (labels) => key in labels;
  }
  throw fail(`found '${trimmed}', expected: identifier, '!', 'in', 'notin', '=', '==', '!=', 'gt', 'lt'`);
}

function parseLabelSelector(text: string | null): Requirement {
  if (text === null || text.trim() === '') return () => true;
  const requirements = splitTopLevel(text).map(labelRequirement);
  return (labels) => requirements.every((requirement) => requirement(labels));
}

function unescapeFieldValue(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}

/** The field labels a type filters on, as kube-apiserver's field label conversion allows them. */
function knownFieldLabels(type: ResourceType): string[] {
  return ['metadata.name', 'metadata.namespace', ...Object.keys(type.fieldLabels)];
}

function parseFieldSelector(text: string | null, type: ResourceType): Requirement {
  if (text === null || text.trim() === '') return () => true;
  const requirements = splitTopLevel(text).map((part): Requirement => {
    const match = /^\s*([^=!\s]+)\s*(==|=|!=)(.*)$/.exec(part);
    if (!match) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const [, field, operator, rawValue] = match as unknown as [string, string, string, string];
    if (!knownFieldLabels(type).includes(field)) {
      // Types with their own field labels use a conversion function that words it this way.
      throw badRequest(
        Object.keys(type.fieldLabels).length > 0
          ? `field label not supported: ${field}`
          : `"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
      );
    }
    const value = unescapeFieldValue(rawValue.trim());
    return operator === '!=' ? (fields) => fields[field] !== value : (fields) => fields[field] === value;
  });
  return (fields) => requirements.every((requirement) => requirement(fields));
}

export function selector(type: ResourceType, labelSelector: string | null, fieldSelector: string | null): Selector {
  const labels = parseLabelSelector(labelSelector);
  const fields = parseFieldSelector(fieldSelector, type);
  return (objectLabels, objectFields) => labels(objectLabels) && fields(objectFields);
}

/** What selectors see of a stored object: its labels and its field set. */
export function selectableAttributes(type: ResourceType, stored: JsonObject): { labels: Record<string, string>; fields: Record<string, string> } {
  const metadata = (stored.metadata ?? {}) as JsonObject;
  const labels = (metadata.labels ?? {}) as Record<string, string>;
  const fields: Record<string, string> = {
    'metadata.name': String(metadata.name ?? ''),
    'metadata.namespace': String(metadata.namespace ?? ''),
  };
  for (const [label, read] of Object.entries(type.fieldLabels)) fields[label] = read(stored);
  return { labels, fields };
}
