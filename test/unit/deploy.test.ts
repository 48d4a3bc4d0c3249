import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { eventKind, eventVerbs, leaseKind, leaseVerbs, watchedKinds, watchVerbs } from '../../src/sources/cluster/kinds.js';
import { runCli } from '../support/cli.js';

/**
 * deploy/ is checked against the code: the RBAC rules grant exactly what the one list of kinds the
 * cluster mode touches says (no more, no less), and the Deployment's arguments are flags `run` takes.
 */

const deploy = join(import.meta.dirname, '..', '..', 'deploy');

interface Rule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
}

function documents(file: string): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(join(deploy, file), 'utf8')).map((d) => d.toJS() as Record<string, unknown>);
}

/** `group resource verb` for every permission a set of rules grants. */
function grants(rules: readonly Rule[]): string[] {
  return rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g} ${res} ${v}`)))).sort();
}

describe('deploy/rbac.yaml', () => {
  const rbac = documents('rbac.yaml');
  const rulesOf = (kind: string) => rbac.filter((d) => d['kind'] === kind).flatMap((d) => d['rules'] as Rule[]);

  it('grants cluster-wide exactly: read every watched kind, write the status each kind says, create Events', () => {
    const expected = [
      ...watchedKinds.flatMap((k) => watchVerbs.map((v) => `${k.group} ${k.plural} ${v}`)),
      ...watchedKinds.flatMap((k) => (k.statusWrite ? [`${k.group} ${k.plural}/status ${k.statusWrite}`] : [])),
      ...eventVerbs.map((v) => `${eventKind.group} ${eventKind.plural} ${v}`),
    ].sort();
    expect(grants(rulesOf('ClusterRole'))).toEqual([...new Set(expected)]);
  });

  it('grants the Lease verbs of leader election in the controller namespace only', () => {
    expect(grants(rulesOf('Role'))).toEqual(leaseVerbs.map((v) => `${leaseKind.group} ${leaseKind.plural} ${v}`).sort());
  });

  it('binds both to the ServiceAccount the Deployment runs as', () => {
    const account = documents('serviceaccount.yaml')[0]!;
    const deployment = documents('deployment.yaml')[0] as { spec: { template: { spec: { serviceAccountName: string } } } };
    expect(deployment.spec.template.spec.serviceAccountName).toBe((account['metadata'] as { name: string }).name);
    for (const binding of rbac.filter((d) => String(d['kind']).endsWith('Binding'))) {
      expect(binding['subjects']).toEqual([{ kind: 'ServiceAccount', name: 'ingress2nginx', namespace: 'ingress2nginx' }]);
    }
  });
});

describe('deploy/', () => {
  it('lists only files that exist in its kustomization', () => {
    const kustomization = documents('kustomization.yaml')[0] as { resources: string[] };
    for (const file of kustomization.resources) expect(existsSync(join(deploy, file)), file).toBe(true);
  });

  it("gives the sidecar arguments that `run` accepts (it then stops at the missing cluster access)", async () => {
    const deployment = documents('deployment.yaml')[0] as {
      spec: { template: { spec: { containers: { name: string; args?: string[] }[] } } };
    };
    const sidecar = deployment.spec.template.spec.containers.find((c) => c.name === 'ingress2nginx')!;
    const args = (sidecar.args ?? []).map((a) => a.replace('$(POD_NAMESPACE)', 'ingress2nginx'));
    const result = await runCli(args, { env: {} });
    expect(result.stderr).toContain('no cluster access');
    expect(result.exitCode).toBe(2);
  });
});
