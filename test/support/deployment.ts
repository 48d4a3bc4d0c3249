import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface SecurityContext {
  readonly runAsUser?: number;
  readonly runAsGroup?: number;
  readonly capabilities?: { readonly drop?: string[]; readonly add?: string[] };
}

/** A container of deploy/'s Deployment, as far as tests and benches run it the same way. */
export interface DeployedContainer {
  readonly name: string;
  readonly securityContext?: SecurityContext;
  readonly env?: readonly { readonly name: string; readonly value?: string }[];
  readonly resources?: { readonly limits?: { readonly memory?: string } };
}

export interface DeployedPod {
  readonly securityContext: SecurityContext;
  readonly containers: readonly DeployedContainer[];
}

/** Found from here upwards: this file runs from test/support and, compiled for the benches, from dist/test/support. */
export const deploymentFile = ((): string => {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    const file = join(dir, 'deploy', 'base', 'deployment.yaml');
    if (existsSync(file) || dir === dirname(dir)) return file;
  }
})();

/** The Pod template of deploy/base/deployment.yaml. */
export async function deployedPod(): Promise<DeployedPod> {
  const deployment = parseAllDocuments(await readFile(deploymentFile, 'utf8'))[0]!.toJS() as { spec: { template: { spec: DeployedPod } } };
  return deployment.spec.template.spec;
}

export async function deployedContainer(name: string): Promise<DeployedContainer> {
  const container = (await deployedPod()).containers.find((c) => c.name === name);
  if (!container) throw new Error(`deploy/base/deployment.yaml has no container ${name}`);
  return container;
}

/** The environment variable `name` of a deployed container, when it sets it to a value. */
export function envOf(container: DeployedContainer, name: string): string | undefined {
  return container.env?.find((variable) => variable.name === name)?.value;
}
