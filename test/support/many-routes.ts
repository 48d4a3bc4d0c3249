import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** `count` Ingresses with one host and path each, and the one Service they share: `count` routes. */
export async function writeManyRoutes(dir: string, count: number): Promise<string> {
  const documents = [
    `apiVersion: v1
kind: Service
metadata: {name: app, namespace: bench}
spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 80}]}
`,
  ];
  for (let i = 0; i < count; i++) {
    const name = `app-${String(i).padStart(5, '0')}`;
    documents.push(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ${name}, namespace: bench}
spec:
  ingressClassName: nginx
  rules:
    - host: ${name}.bench.example.test
      http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}]}
`);
  }
  const file = join(dir, 'many-routes.yaml');
  await writeFile(file, documents.join('---\n'));
  return file;
}
