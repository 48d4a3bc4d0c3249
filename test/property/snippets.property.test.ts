import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { build } from '../../src/build/build.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import type { SnippetOptions, TranslateOptions } from '../../src/translate/options.js';
import { configMap, namespaceObject, object } from '../support/gateway.js';
import { checkBuiltFiles, requireNginx } from '../support/nginx.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * Snippets against a real `nginx -t`, over random Ingresses in three namespaces, each snippet carrying
 * its namespace's marker, with snippets off, allowed by name, or allowed by a namespace label:
 * - no snippet text of a namespace outside the scope reaches nginx.conf (off: none at all);
 * - a snippet that would leave its block (unbalanced braces, an open quote) never reaches it either;
 * - the config always loads: a snippet nginx would refuse is not in these (see test/integration/snippets.test.ts).
 */

const runs = Number(process.env.I2N_PROPERTY_RUNS ?? 40);
const runDir = '/tmp/i2n-property-snippets';
const namespaces = ['team-a', 'team-b', 'team-c'] as const;
const markerOf = (namespace: string) => `SNIPPET${namespace.replace('-', '')}`;

/**
 * Snippet texts for a namespace: valid ones, and ones that try to leave their block. A stream server listens
 * on a socket of its own Ingress: two servers on one socket is a config nginx refuses whoever wrote it.
 */
const snippetTexts = (annotation: string, m: string, index: number): readonly string[] => {
  switch (annotation) {
    case 'configuration-snippet':
      return [`add_header X-${m} 1;`, `set $${m} 1;`, `} location /${m} { return 200;`, `add_header X-${m} "1;`, `add_header X-${m} 1`, `set $a x#;} location /${m} {`];
    case 'server-snippet':
      return [`location = /${m} { return 200; }`, `} server { server_name ${m}; }`, `location /${m} {`];
    default:
      return [`server { listen unix:${runDir}/${m}-${index}.sock; return "${m}"; }`, `} ${m} {`];
  }
};

interface IngressCase {
  readonly namespace: (typeof namespaces)[number];
  readonly host: string;
  readonly snippets: readonly (readonly [string, number])[];
}

const ingressCase: fc.Arbitrary<IngressCase> = fc.record({
  namespace: fc.constantFrom(...namespaces),
  host: fc.constantFrom('a.example.test', 'b.example.test', 'c.example.test'),
  snippets: fc.uniqueArray(fc.tuple(fc.constantFrom('configuration-snippet', 'server-snippet', 'stream-snippet'), fc.nat(5)), {
    selector: ([name]) => name,
    maxLength: 3,
  }),
});

type Scope = 'off' | 'named' | 'labelled' | 'configmap-off-risk';

function objectsOf(ingresses: readonly IngressCase[]): SourceObject[] {
  const objects: SourceObject[] = [
    namespaceObject('team-a', { snippets: 'allowed' }),
    namespaceObject('team-b', {}),
    configMap('infra', 'controller', { 'worker-processes': '1' }),
    configMap('infra', 'risky', { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'High' }),
  ];
  for (const ns of namespaces) objects.push(object('v1', 'Service', ns, 'web', { spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }] } }));
  ingresses.forEach((c, index) => {
    const annotations = Object.fromEntries(
      c.snippets.map(([name, pick]) => {
        const texts = snippetTexts(name, markerOf(c.namespace), index);
        return [`nginx.ingress.kubernetes.io/${name}`, texts[pick % texts.length]!];
      }),
    );
    const base = object('networking.k8s.io/v1', 'Ingress', c.namespace, `ing-${index}`, {
      spec: { ingressClassName: 'nginx', rules: [{ host: c.host, http: { paths: [{ path: `/${index}`, pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
    });
    objects.push({ ...base, metadata: { ...base.metadata, annotations } });
  });
  return objects;
}

const scopes: Record<Scope, { snippets?: SnippetOptions; configMap: string; allowed: readonly string[] }> = {
  off: { configMap: 'infra/controller', allowed: [] },
  named: { snippets: { allow: true, namespaces: ['team-a'] }, configMap: 'infra/controller', allowed: ['team-a'] },
  labelled: { snippets: { allow: true, namespaceSelector: { snippets: 'allowed' } }, configMap: 'infra/controller', allowed: ['team-a'] },
  'configmap-off-risk': { configMap: 'infra/risky', allowed: [] },
};

describe('snippets', () => {
  it(`reach nginx.conf only from namespaces in scope, only inside their block, and the config loads (${runs} cases)`, async () => {
    const nginx = requireNginx();
    const base: TranslateOptions = testTranslateOptions({ runDir, ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }) });
    await fc.assert(
      fc.asyncProperty(fc.array(ingressCase, { minLength: 1, maxLength: 6 }), fc.constantFrom(...(Object.keys(scopes) as Scope[])), async (ingresses, scopeName) => {
        const scope = scopes[scopeName];
        const result = build({ objects: objectsOf(ingresses) }, { ...base, configMap: scope.configMap, ...(scope.snippets && { snippets: scope.snippets }) });
        const conf = result.files.find((f) => f.path === 'nginx.conf')!.contents;
        for (const ns of namespaces) {
          if (!scope.allowed.includes(ns)) expect(conf, `${scopeName}: ${ns}`).not.toContain(markerOf(ns));
        }
        // What leaked out of its block would sit outside a location: every marker line is one of the valid texts.
        for (const line of conf.split('\n').filter((l) => l.includes('SNIPPET'))) {
          expect(line, line).toMatch(/^(add_header X-SNIPPET\w+ 1;|set \$SNIPPET\w+ 1;|location = \/SNIPPET\w+ \{ return 200; \}|server \{ listen unix:\S+ return "SNIPPET\w+"; \})$/);
        }
        const check = await checkBuiltFiles(result.files, runDir);
        expect(check.output).toBe('');
        expect(check.ok).toBe(true);
      }),
      { numRuns: runs, seed: process.env.I2N_PROPERTY_SEED ? Number(process.env.I2N_PROPERTY_SEED) : undefined },
    );
  }, Math.max(60_000, runs * 500));
});
