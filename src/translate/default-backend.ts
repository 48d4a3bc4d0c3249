/**
 * The controller's default backend (`--default-backend-service`, ingress-nginx's flag): the Service that
 * answers what no Ingress path matches (unknown hosts, unmatched paths, over HTTP and HTTPS) and the
 * controller ConfigMap's `custom-http-errors`, with ingress-nginx's `X-Code`, `X-Format`, ... headers.
 * An Ingress's own `default-backend` and `custom-http-errors` keep precedence: its paths and error pages
 * are its locations', and a location's `error_page`s replace the server's in nginx. Without one, what no
 * path matches answers nginx's own 404 page, and the ConfigMap's codes are left to the backends.
 */
import type { ControllerErrorPages, Location, Proxy } from '../model/nginx.js';
import type { SourceObject } from '../sources/snapshot.js';
import { resolveServiceBackend, type BackendPolicy, type ResolvedBackend } from './backends.js';
import type { ControllerSettings } from './ingress/configmap.js';
import type { Reporter } from './report.js';
import type { Resources } from './resources.js';

/** What the error pages send as `X-Namespace`, `X-Ingress-Name`, `X-Service-Name`, `X-Service-Port`: set by each Ingress location. */
const errorPageVariables = ['i2n_namespace', 'i2n_ingress_name', 'i2n_service_name', 'i2n_service_port'] as const;

export interface ControllerDefaultBackend {
  readonly backend: ResolvedBackend;
  /** How the locations where no path matches reach it. */
  readonly proxy: Proxy;
  /** The ConfigMap's `custom-http-errors`, when it names any. */
  readonly errorPages?: ControllerErrorPages;
}

/**
 * The default backend of `--default-backend-service` (its first port, as for the `default-backend`
 * annotation), or undefined, with an error when the Service cannot be used (then nginx answers 404).
 */
export function controllerDefaultBackend(
  service: string | undefined,
  settings: Pick<ControllerSettings, 'customHttpErrors'>,
  resources: Resources,
  policy: BackendPolicy,
  report: Reporter,
  configMap: SourceObject | undefined,
): ControllerDefaultBackend | undefined {
  const codes = settings.customHttpErrors;
  if (service === undefined) {
    if (codes.length > 0) {
      report.warning('custom-http-errors-without-default-backend', configMap, 'custom-http-errors has no effect without --default-backend-service, the Service that answers them; the backends\' own error responses are sent', ['data', 'custom-http-errors']);
    }
    return undefined;
  }
  const [namespace = '', name = ''] = service.split('/');
  const port = resources.services.get(service)?.spec.ports?.[0]?.port;
  const resolution = port === undefined
    ? { ok: false as const, problem: `Service ${service} is not in the input or has no port` }
    : resolveServiceBackend(resources, namespace, { name, port: { number: port } }, policy);
  if (!resolution.ok) {
    report.error('default-backend-service-unresolved', undefined, `--default-backend-service: ${resolution.problem}; requests no Ingress path matches answer 404, and custom-http-errors are left to the backends`);
    return undefined;
  }
  const backend = resolution.value;
  const pass = backend.runtimeName !== undefined ? 'http://$i2n_backend' : `http://${backend.upstream}`;
  const proxy: Proxy = {
    upstream: backend.upstream,
    grpc: false,
    module: 'proxy',
    pass,
    ...(backend.runtimeName !== undefined && { resolve: backend.runtimeName }),
    service: backend.service,
    scheme: 'http',
    host: '$i2n_best_host',
    httpVersion: '1.1',
    headers: [],
    inheritsRequestHeaders: true,
    interceptErrors: false,
  };
  return { backend, proxy, ...(codes.length > 0 && { errorPages: errorPagesOf(codes, backend) }) };
}

function errorPagesOf(codes: readonly number[], backend: ResolvedBackend): ControllerErrorPages {
  const errorProxy = {
    pass: backend.runtimeName !== undefined ? 'http://$i2n_backend' : `http://${backend.upstream}`,
    ...(backend.runtimeName !== undefined && { resolve: backend.runtimeName }),
    upstream: backend.upstream,
  };
  const locations: Location[] = codes.map((code) => ({
    modifier: '',
    path: `@i2n_controller_error_${code}`,
    comment: `custom-http-errors ${code} of the controller ConfigMap`,
    plainHttp: { redirect: false, serve: true },
    errorPage: { code, proxy: errorProxy },
  }));
  return { pages: locations.map((location, i) => ({ code: codes[i]!, target: location.path })), locations, variables: [...errorPageVariables] };
}
