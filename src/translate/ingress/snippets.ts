import type { AuthEndpoint, Location, VirtualHost } from '../../model/nginx.js';
import { compareStrings } from '../../model/order.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { namespaceLabels } from '../resources.js';
import type { SnippetOptions } from '../options.js';
import { compareAge } from '../settle/precedence.js';
import type { Reporter } from '../report.js';
import { snippetProblem } from '../checks/snippet-text.js';
import { annotationPrefix } from './annotations/rule.js';
import type { AnnotationIssue } from './annotations/index.js';
import { withFields } from '../../model/objects.js';
import type { ControllerSettings } from './configmap.js';

/**
 * Snippets, when the operator allows them: `--allow-snippet-annotations` or the controller ConfigMap's
 * `allow-snippet-annotations: "true"` (ingress-nginx's names), for the namespaces `--snippet-namespace`
 * names or `--snippet-namespace-selector` selects (a scope ingress-nginx never had; all namespaces when
 * neither is given). An `annotations-risk-level` below `Critical` keeps snippet annotations refused, as in
 * ingress-nginx 1.12 and later, whose default `High` applies where the ConfigMap key is what allows them. Allowed snippets go where ingress-nginx
 * puts them; everything else about them stays refused (snippets.ts in annotations/ says why).
 */

/** Snippet annotations rendered when allowed, and where: the location, the server, the stream block, the auth subrequest's location. */
export const placedSnippetAnnotations = ['configuration-snippet', 'server-snippet', 'stream-snippet', 'auth-snippet'] as const;
type PlacedSnippet = (typeof placedSnippetAnnotations)[number];

/** Controller ConfigMap keys rendered when snippets are allowed: nginx's main context, http and stream blocks, every server, every location. */
export const placedSnippetKeys = ['main-snippet', 'http-snippet', 'stream-snippet', 'server-snippet', 'location-snippet'] as const;
export type ConfigMapSnippets = Partial<Record<(typeof placedSnippetKeys)[number], string>>;

export interface SnippetScope {
  /** Why snippets are refused in this namespace, or undefined when they are allowed there. */
  refusal(namespace: string): string | undefined;
  /** The operator allowed snippets at all: the ConfigMap's snippets are rendered. */
  readonly allowed: boolean;
}

/** Where snippets are allowed, from the flags and the controller ConfigMap's two keys. */
export function snippetScope(
  options: SnippetOptions | undefined,
  settings: Pick<ControllerSettings, 'allowSnippetAnnotations' | 'annotationsRiskLevel'>,
  namespaces: ReadonlyMap<string, Readonly<Record<string, string>>>,
): SnippetScope {
  const allowed = (options?.allow ?? false) || settings.allowSnippetAnnotations;
  // ingress-nginx 1.12+ defaults the level to High where its ConfigMap key allows snippets; our flag
  // allows them at Critical, and a level the ConfigMap sets applies to both.
  const risk = settings.annotationsRiskLevel ?? (options?.allow ? 'Critical' : 'High');
  const riskSource = settings.annotationsRiskLevel === undefined ? 'default' : 'set';
  const listed = new Set(options?.namespaces ?? []);
  const selector = options?.namespaceSelector;
  const scoped = listed.size > 0 || selector !== undefined;
  const selected = (namespace: string) => {
    if (!selector) return false;
    const labels = namespaceLabels(namespaces, namespace);
    return Object.entries(selector).every(([key, value]) => labels[key] === value);
  };
  return {
    allowed,
    refusal(namespace) {
      if (!allowed) return 'snippets are off (allow them with --allow-snippet-annotations or the ConfigMap key allow-snippet-annotations: "true", for chosen namespaces with --snippet-namespace or --snippet-namespace-selector)';
      if (risk !== 'Critical' && riskSource === 'set') {
        return `the ConfigMap's annotations-risk-level is ${JSON.stringify(risk)}, and snippet annotations are Critical (as in ingress-nginx 1.12 and later)`;
      }
      if (risk !== 'Critical') {
        return 'the ConfigMap\'s allow-snippet-annotations allows them, but its annotations-risk-level is not set and defaults to "High", as in ingress-nginx 1.12 and later, and snippet annotations are Critical; set annotations-risk-level: "Critical" in the ConfigMap, or pass --allow-snippet-annotations';
      }
      if (scoped && !listed.has(namespace) && !selected(namespace)) {
        return `snippets are allowed only in the namespaces of --snippet-namespace and --snippet-namespace-selector, and ${namespace} is not one of them`;
      }
      return undefined;
    },
  };
}

export type IngressSnippets = Partial<Record<PlacedSnippet, string>>;

/**
 * The snippet annotations of an Ingress where its namespace may use them: the parser's refusals of the
 * ones placed are dropped, each text is checked to stay inside its block (an error otherwise, which
 * leaves the Ingress out), and a warning says the Ingress puts raw text into nginx.conf. Where they are
 * refused, the refusal says why.
 */
export function allowedSnippets(
  object: SourceObject,
  issues: readonly AnnotationIssue[],
  scope: SnippetScope,
  report: Reporter,
): { issues: AnnotationIssue[]; snippets: IngressSnippets } {
  const refusal = scope.refusal(object.metadata.namespace);
  const placed = new Set<string>(placedSnippetAnnotations.map((name) => annotationPrefix + name));
  if (refusal !== undefined) {
    if (!scope.allowed) return { issues: [...issues], snippets: {} };
    const explained = issues.map((issue) =>
      issue.code === 'snippet-refused' && placed.has(issue.annotation) ? { ...issue, message: `${issue.message} Here: ${refusal}.` } : issue,
    );
    return { issues: explained, snippets: {} };
  }
  const snippets: IngressSnippets = {};
  const kept: AnnotationIssue[] = [];
  for (const issue of issues) {
    if (issue.code !== 'snippet-refused' || !placed.has(issue.annotation)) {
      kept.push(issue);
      continue;
    }
    const name = issue.annotation.slice(annotationPrefix.length) as PlacedSnippet;
    const text = object.metadata.annotations[issue.annotation] ?? '';
    const problem = snippetProblem(text);
    if (problem !== undefined) {
      kept.push({ ...issue, code: 'snippet-invalid', message: `${name} is not used: ${problem}; the Ingress is not rendered.`, leavesOut: true });
    } else if (text.trim() !== '') snippets[name] = text.trim();
  }
  const used = Object.keys(snippets).sort(compareStrings);
  if (used.length > 0) {
    report.warning(
      'snippet-in-use',
      object,
      `${used.join(', ')}: raw nginx text from this Ingress goes into nginx.conf as written. Only nginx -t checks it; whoever may edit this Ingress can change what nginx does for every host (see docs/features.md, "Allowing snippets", and audit for annotations that replace them)`,
      ['metadata', 'annotations', annotationPrefix + used[0]!],
    );
  }
  return { issues: kept, snippets };
}

const setsRequestHeaders = /(^|[\s;{}])(proxy|grpc)_set_header\s/;

/** The allowed snippets of the rendered Ingresses, by `namespace/name`, with their Ingress for age. */
export class SnippetRegistry {
  private readonly byIngress = new Map<string, { object: SourceObject; snippets: IngressSnippets }>();

  /** `locationSnippet`: the ConfigMap's `location-snippet`, which the template puts in every location. */
  constructor(private readonly locationSnippet?: string) {}

  add(object: SourceObject, snippets: IngressSnippets): void {
    if (Object.keys(snippets).length > 0) this.byIngress.set(`${object.metadata.namespace}/${object.metadata.name}`, { object, snippets });
  }

  /** Adds the snippets `other` holds, in its order. */
  absorb(other: SnippetRegistry): void {
    for (const { object, snippets } of other.byIngress.values()) this.add(object, snippets);
  }

  /** The `auth-url` location of the Ingress, with its allowed `auth-snippet`. */
  withAuthSnippet(object: SourceObject, endpoint: AuthEndpoint): AuthEndpoint {
    const snippet = this.byIngress.get(`${object.metadata.namespace}/${object.metadata.name}`)?.snippets['auth-snippet'];
    return snippet === undefined ? endpoint : withFields(endpoint, { snippet });
  }

  /** `stream-snippet`s, oldest Ingress first. */
  streamSnippets(): string[] {
    return [...this.byIngress.values()]
      .sort((a, b) => compareAge(a.object, b.object))
      .flatMap((entry) => (entry.snippets['stream-snippet'] !== undefined ? [entry.snippets['stream-snippet']] : []));
  }

  /**
   * Each location gets its Ingress's `configuration-snippet`; each host the `server-snippet` of the
   * oldest Ingress with a location on it that has one (ingress-nginx takes the first it finds in that
   * order); a newer one for the same host is reported unused.
   */
  place(virtualHosts: readonly VirtualHost[], report: Reporter): VirtualHost[] {
    if (this.byIngress.size === 0 && this.locationSnippet === undefined) return [...virtualHosts];
    return virtualHosts.map((host) => {
      const locations = host.locations.map((location) => this.withLocationSnippet(location));
      const owners = [...new Set(host.locations.map((l) => this.ingressOf(l)).filter((o) => o !== undefined))]
        .filter((entry) => entry.snippets['server-snippet'] !== undefined)
        .sort((a, b) => compareAge(a.object, b.object));
      const [first, ...later] = owners;
      for (const entry of later) {
        report.warning(
          'snippet-not-used',
          entry.object,
          `server-snippet is not used for ${host.serverName}: the older Ingress ${first!.object.metadata.namespace}/${first!.object.metadata.name} gives that server its snippet`,
          ['metadata', 'annotations', `${annotationPrefix}server-snippet`],
        );
      }
      const serverSnippet = first?.snippets['server-snippet'];
      return withFields(host, { locations, ...(serverSnippet !== undefined && { serverSnippet }) });
    });
  }

  /**
   * nginx inherits `proxy_set_header` all or nothing: a snippet that sets one makes the location repeat
   * the request headers every location gets, as ingress-nginx's locations all set them.
   */
  withLocationSnippet(location: Location): Location {
    const snippet = this.ingressOf(location)?.snippets['configuration-snippet'];
    const setsHeaders = [snippet, this.locationSnippet].some((text) => text !== undefined && setsRequestHeaders.test(text));
    const proxy = setsHeaders && location.proxy?.inheritsRequestHeaders ? withFields(location.proxy, { inheritsRequestHeaders: false }) : location.proxy;
    if (snippet === undefined && proxy === location.proxy) return location;
    return withFields(location, { ...(snippet !== undefined && { snippet }), ...(proxy && { proxy }) });
  }

  private ingressOf(location: Location) {
    const resource = location.origin?.claim.claimant.resource;
    return resource?.kind === 'Ingress' ? this.byIngress.get(`${resource.namespace}/${resource.name}`) : undefined;
  }
}

/**
 * The controller ConfigMap's snippet keys, when snippets are allowed: the parser's refusals of them are
 * dropped and the texts checked like the annotations'. The ConfigMap is the operator's own, so no
 * namespace scope applies.
 */
export function configMapSnippets(
  data: Readonly<Record<string, string>>,
  scope: SnippetScope,
): { snippets: ConfigMapSnippets; problems: { key: string; message: string }[] } {
  const snippets: ConfigMapSnippets = {};
  const problems: { key: string; message: string }[] = [];
  if (!scope.allowed) return { snippets, problems };
  for (const key of placedSnippetKeys) {
    const text = data[key];
    if (text === undefined || text.trim() === '') continue;
    const problem = snippetProblem(text);
    if (problem !== undefined) problems.push({ key, message: `${key} is not used: ${problem}` });
    else snippets[key] = text.trim();
  }
  return { snippets, problems };
}

/** The scope of the flags and the controller ConfigMap's keys, with the labels of the Namespaces in the input. */
export function ingressSnippetScope(
  objects: readonly SourceObject[],
  settings: Pick<ControllerSettings, 'allowSnippetAnnotations' | 'annotationsRiskLevel'>,
  options: { readonly snippets?: SnippetOptions },
): SnippetScope {
  const namespaces = new Map(objects.filter((o) => o.kind === 'Namespace').map((o) => [o.metadata.name, o.metadata.labels]));
  return snippetScope(options.snippets, settings, namespaces);
}

/** The settings parser refuses every snippet key; those placed are the scope's to allow. */
export function withoutSnippetKeys<Issue extends { readonly code: string; readonly key: string }>(issues: readonly Issue[], scope: SnippetScope): Issue[] {
  const placed: ReadonlySet<string> = new Set(placedSnippetKeys);
  return issues.filter((issue) => !(scope.allowed && issue.code === 'snippet-refused' && placed.has(issue.key)));
}
