import type { LabelSelector } from './schemas.js';

/** metav1.LabelSelector: every matchLabels entry and every expression must hold; an empty selector matches all. */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  const has = (k: string) => Object.prototype.hasOwnProperty.call(labels, k);
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (!has(k) || labels[k] !== v) return false;
  }
  for (const expression of selector.matchExpressions ?? []) {
    const values = expression.values ?? [];
    const present = has(expression.key);
    const value = labels[expression.key];
    switch (expression.operator) {
      case 'In':
        if (!present || !values.includes(value ?? '')) return false;
        break;
      case 'NotIn':
        if (present && values.includes(value ?? '')) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
    }
  }
  return true;
}

/** What metav1.LabelSelector validation rejects: In/NotIn need values, Exists/DoesNotExist take none. */
export function selectorProblem(selector: LabelSelector): string | undefined {
  for (const expression of selector.matchExpressions ?? []) {
    const count = expression.values?.length ?? 0;
    if ((expression.operator === 'In' || expression.operator === 'NotIn') && count === 0) {
      return `matchExpressions with operator ${expression.operator} needs at least one value`;
    }
    if ((expression.operator === 'Exists' || expression.operator === 'DoesNotExist') && count > 0) {
      return `matchExpressions with operator ${expression.operator} takes no values`;
    }
  }
  return undefined;
}
