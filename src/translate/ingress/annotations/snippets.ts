/**
 * Snippets are raw nginx text from whoever may write an Ingress or the ConfigMap. Pasting them into
 * nginx.conf is the injection class behind CVE-2021-25742 (snippets reading every Secret the
 * controller can) and the IngressNightmare CVEs of 2025 (CVE-2025-1974 and its siblings, configuration
 * injected through annotations). No allow-list can make arbitrary directives safe, so they are refused.
 */
export function isSnippetKey(name: string): boolean {
  return name.endsWith('-snippet');
}

export const snippetRefusedReason =
  'Snippets are raw nginx configuration and are never rendered: that is the injection class behind ' +
  'CVE-2021-25742 and IngressNightmare (CVE-2025-1974). Express the behaviour with a supported ' +
  'annotation or ConfigMap key, or ask for one to be added.';
