/**
 * Snippets are raw nginx text from whoever may write an Ingress or the ConfigMap. Pasting them into
 * nginx.conf is the injection class behind CVE-2021-25742 (snippets reading every Secret the
 * controller can) and the IngressNightmare CVEs of 2025 (CVE-2025-1974 and its siblings, configuration
 * injected through annotations). No allow-list can make arbitrary directives safe, so they are refused
 * unless the operator allows them for chosen namespaces (ingress/snippets.ts).
 */
export function isSnippetKey(name: string): boolean {
  return name.endsWith('-snippet');
}

export const snippetRefusedReason =
  'Snippets are raw nginx configuration, the injection class behind CVE-2021-25742 and IngressNightmare ' +
  '(CVE-2025-1974), and are off unless the operator allows them for the namespace (--allow-snippet-annotations). ' +
  'Express the behaviour with a supported annotation or ConfigMap key (audit names one for common snippets).';
