import { describe, expect, it } from 'vitest';
import { object, v1 } from '../../../test/support/gateway.js';
import { selectorMatches, selectorProblem } from './namespaces.js';
import { namespaceLabels } from '../resources.js';
import { ReferenceGrants, type ReferenceGrantSpec } from '../reference-grants.js';

function grant(namespace: string, spec: ReferenceGrantSpec) {
  return { object: object(v1, 'ReferenceGrant', namespace, 'grant', { spec }), spec };
}

const routeToService = (toName = 'app') => ({
  from: { group: 'gateway.networking.k8s.io', kind: 'TLSRoute', namespace: 'apps' },
  to: { group: '', kind: 'Service', namespace: 'backends', name: toName },
});

describe('ReferenceGrant', () => {
  const allowed = grant('backends', {
    from: [{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute', namespace: 'apps' }],
    to: [{ group: '', kind: 'Service' }],
  });

  it('needs no grant within one namespace', () => {
    expect(new ReferenceGrants([]).permits({ ...routeToService(), to: { ...routeToService().to, namespace: 'apps' } })).toBe(true);
  });

  it('refuses a cross-namespace reference without a grant', () => {
    expect(new ReferenceGrants([]).permits(routeToService())).toBe(false);
  });

  it('permits a reference the grant in the target namespace lists', () => {
    expect(new ReferenceGrants([allowed]).permits(routeToService())).toBe(true);
  });

  it('ignores a grant that lives in the referrer namespace instead of the target namespace', () => {
    const misplaced = grant('apps', allowed.spec);
    expect(new ReferenceGrants([misplaced]).permits(routeToService())).toBe(false);
  });

  it('refuses a referrer from another namespace', () => {
    const other = grant('backends', { ...allowed.spec, from: [{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute', namespace: 'elsewhere' }] });
    expect(new ReferenceGrants([other]).permits(routeToService())).toBe(false);
  });

  it('refuses a referrer of another kind', () => {
    const gateways = grant('backends', { ...allowed.spec, from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'apps' }] });
    expect(new ReferenceGrants([gateways]).permits(routeToService())).toBe(false);
  });

  it('refuses a target of another kind', () => {
    const secrets = grant('backends', { ...allowed.spec, to: [{ group: '', kind: 'Secret' }] });
    expect(new ReferenceGrants([secrets]).permits(routeToService())).toBe(false);
  });

  it('restricts to the named target when to.name is set', () => {
    const named = grant('backends', { ...allowed.spec, to: [{ group: '', kind: 'Service', name: 'app' }] });
    const grants = new ReferenceGrants([named]);
    expect(grants.permits(routeToService('app'))).toBe(true);
    expect(grants.permits(routeToService('other'))).toBe(false);
  });
});

describe('namespace label selectors', () => {
  const labels = { team: 'a', tier: 'web' };

  it('matches everything with an empty selector', () => {
    expect(selectorMatches({}, {})).toBe(true);
  });

  it.each([
    [{ matchLabels: { team: 'a' } }, true],
    [{ matchLabels: { team: 'b' } }, false],
    [{ matchLabels: { team: 'a', tier: 'db' } }, false],
    [{ matchExpressions: [{ key: 'team', operator: 'In' as const, values: ['a', 'b'] }] }, true],
    [{ matchExpressions: [{ key: 'team', operator: 'In' as const, values: ['b'] }] }, false],
    [{ matchExpressions: [{ key: 'team', operator: 'NotIn' as const, values: ['b'] }] }, true],
    [{ matchExpressions: [{ key: 'missing', operator: 'NotIn' as const, values: ['b'] }] }, true],
    [{ matchExpressions: [{ key: 'team', operator: 'NotIn' as const, values: ['a'] }] }, false],
    [{ matchExpressions: [{ key: 'tier', operator: 'Exists' as const }] }, true],
    [{ matchExpressions: [{ key: 'missing', operator: 'Exists' as const }] }, false],
    [{ matchExpressions: [{ key: 'missing', operator: 'DoesNotExist' as const }] }, true],
    [{ matchExpressions: [{ key: 'team', operator: 'DoesNotExist' as const }] }, false],
  ])('%j → %s', (selector, expected) => {
    expect(selectorMatches(selector, labels)).toBe(expected);
  });

  it('gives every namespace its kubernetes.io/metadata.name label, and input labels only to input Namespaces', () => {
    const known = new Map([['apps', { team: 'a' }]]);
    expect(namespaceLabels(known, 'apps')).toEqual({ team: 'a', 'kubernetes.io/metadata.name': 'apps' });
    expect(namespaceLabels(known, 'other')).toEqual({ 'kubernetes.io/metadata.name': 'other' });
  });

  it('reports selectors the API server would refuse', () => {
    expect(selectorProblem({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] })).toContain('needs at least one value');
    expect(selectorProblem({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).toContain('takes no values');
    expect(selectorProblem({ matchLabels: { a: 'b' } })).toBeUndefined();
  });
});
