import { createHash } from 'node:crypto';
import type { Location, NginxConfig, VirtualHost } from '../../model/nginx.js';
import { withFields } from '../../model/objects.js';
import type { ContextMemo } from '../memo/context-memo.js';
import { compareStrings } from '../../model/order.js';
import { readablePart } from '../upstream-names.js';

/**
 * What a request is counted under in the request metrics, as ingress-nginx labels it: the Ingress
 * (namespace, name), its Service, and the path as written in the Ingress (never the request URI, so
 * the label sets stay as many as there are paths).
 */
export interface RequestRoute {
  readonly namespace: string;
  readonly ingress: string;
  readonly service: string;
  readonly path: string;
}

/** What the cluster mode needs to label the lines nginx sends for the config it runs. */
export interface RequestLogTables {
  /** By the key each location logs (`logLabels.route`). */
  readonly routes: ReadonlyMap<string, RequestRoute>;
  /** Every name a server answers (exact, or `*.suffix`): the `host` label takes no other value. */
  readonly hosts: readonly string[];
  /** Every SNI name passed through (exact, or `*.suffix`): the passthrough metrics' `server_name`. */
  readonly passthroughNames: readonly string[];
  /**
   * The canary upstreams (as `$proxy_host` logs them), each with ingress-nginx's name for it: the `canary`
   * label's value for a request the canary served, and "" for every other.
   */
  readonly canaries: ReadonlyMap<string, string>;
}

/** Whether the config logs requests at all: the people's log or the request metrics' lines. */
export function logsRequests(model: NginxConfig): boolean {
  return model.accessLog !== 'off' || model.requestLog !== undefined;
}

/**
 * The model with what each location logs, for a config that logs requests: ingress-nginx's upstream name
 * (`$proxy_upstream_name`) for the access log, and the key of the location's labels for the request
 * metrics. Each only for the log that reads it: a `set` costs every request of the location. The key is a
 * digest of the label values, so a line that an old worker sends after a reload still finds its labels
 * when the route is unchanged, and the same input gives the same bytes.
 */
export function withLogLabels(
  model: NginxConfig,
  memo?: LogLabelsMemo,
  canariesOf: CanariesOf = canaryUpstreams,
  hostMemo?: ContextMemo<VirtualHost, VirtualHost>,
): NginxConfig {
  if (!logsRequests(model)) return model;
  const logs = { upstreamName: model.accessLog !== 'off', route: model.requestLog !== undefined };
  const context = `${logs.upstreamName} ${logs.route}`;
  const labelAll = (locations: readonly Location[]): readonly Location[] => locations.map((location) => labelLocation(location, logs));
  const label = memo ? memo.in(context, labelAll) : labelAll;
  const labelHostOf = (host: VirtualHost): VirtualHost => withFields(host, { locations: label(host.locations) });
  const labelHost = hostMemo ? hostMemo.in(context, labelHostOf) : labelHostOf;
  const alternatives = alternativeUpstreams(model, canariesOf);
  const ownPorts = model.http.ownPorts?.map((own) =>
    withFields(own, { defaultServer: withFields(own.defaultServer, { locations: label(own.defaultServer.locations) }), virtualHosts: own.virtualHosts.map(labelHostOf) }),
  );
  const http = withFields(model.http, {
    defaultServer: withFields(model.http.defaultServer, { locations: label(model.http.defaultServer.locations) }),
    virtualHosts: model.http.virtualHosts.map(labelHost),
    ...(ownPorts && { ownPorts }),
    logging: {
      ...(model.accessLog !== 'off' && { accessLogFile: model.accessLog }),
      alternativeUpstreams: [...alternatives].map(([upstream, name]) => ({ upstream, name })).sort((a, b) => compareStrings(a.upstream, b.upstream)),
    },
  });
  return withFields(model, { http });
}

/**
 * The labelled locations of a host by its locations before (the same array while the host is unchanged,
 * translate/settle/hosts.ts `HostSettleMemo`), for the logs one build asks for: a build after one change
 * labels the changed hosts only.
 */
export type LogLabelsMemo = ContextMemo<readonly Location[], readonly Location[]>;

/** The labels of every location that logs them, the names served, and the SNI names passed through. */
export function requestLogTables(model: NginxConfig): RequestLogTables {
  const routes = new Map<string, RequestRoute>();
  const add = (locations: readonly Location[]): void => {
    for (const location of locations) {
      const route = requestRoute(location);
      if (route) routes.set(routeKey(route), route);
    }
  };
  add(model.http.defaultServer.locations);
  for (const host of model.http.virtualHosts) add(host.locations);
  for (const own of model.http.ownPorts ?? []) {
    add(own.defaultServer.locations);
    for (const host of own.virtualHosts) add(host.locations);
  }
  const passthroughNames = new Set<string>();
  for (const server of [...model.stream.passthroughServers, ...model.stream.proxyProtocolServers]) {
    for (const route of server.routes) passthroughNames.add(route.serverName);
  }
  return {
    routes,
    hosts: model.http.ownPorts
      ? [...new Set([...model.http.virtualHosts, ...model.http.ownPorts.flatMap((own) => own.virtualHosts)].map((host) => host.serverName))].sort(compareStrings)
      : model.http.virtualHosts.map((host) => host.serverName),
    passthroughNames: [...passthroughNames].sort(compareStrings),
    canaries: alternativeUpstreams(model),
  };
}

/** The upstreams of the canaries of some locations (the cluster mode keeps them per locations array: location-facts.ts). */
export type CanariesOf = (locations: readonly Location[]) => readonly string[];

function canaryUpstreams(locations: readonly Location[]): string[] {
  return locations.flatMap((location) => (location.proxy?.canary ? [location.proxy.canary.upstream] : []));
}

/** Canary upstreams by name, each with ingress-nginx's name for it. */
function alternativeUpstreams(model: NginxConfig, canariesOf: CanariesOf = canaryUpstreams): Map<string, string> {
  const alternatives = new Map<string, string>();
  const ownLocations = (model.http.ownPorts ?? []).flatMap((own) => [own.defaultServer.locations, ...own.virtualHosts.map((host) => host.locations)]);
  for (const locations of [model.http.defaultServer.locations, ...model.http.virtualHosts.map((host) => host.locations), ...ownLocations]) {
    for (const upstream of canariesOf(locations)) if (!alternatives.has(upstream)) alternatives.set(upstream, ingressNginxUpstreamName(upstream));
  }
  return alternatives;
}

function labelLocation(location: Location, logs: { readonly upstreamName: boolean; readonly route: boolean }): Location {
  const route = requestRoute(location);
  const service = location.proxy?.service;
  if (!route || !service) return location;
  return withFields(location, {
    logLabels: {
      ...(logs.upstreamName && { upstreamName: `${service.namespace}-${service.name}-${service.port}` }),
      ...(logs.route && { route: routeKey(route) }),
    },
  });
}

/** A location proxied for an Ingress path (or route rule) has labels; redirects and 404s have none. */
function requestRoute(location: Location): RequestRoute | undefined {
  const service = location.proxy?.service;
  const origin = location.origin;
  if (!service || !origin) return undefined;
  const resource = origin.claim.claimant.resource;
  return { namespace: resource.namespace ?? '', ingress: resource.name, service: service.name, path: origin.path };
}

function routeKey(route: RequestRoute): string {
  return createHash('sha256').update(`${route.namespace}\0${route.ingress}\0${route.service}\0${route.path}`).digest('hex').slice(0, 16);
}

/** ingress-nginx names an upstream `namespace-service-port`; ours carry the same parts joined by `_`. */
function ingressNginxUpstreamName(upstream: string): string {
  return readablePart(upstream).replaceAll('_', '-');
}
