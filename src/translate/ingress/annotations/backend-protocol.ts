import { z } from 'zod';
import { rule } from './rule.js';

/**
 * The ingress-nginx backend protocols we render (`FCGI` with `fastcgi_pass`, fastcgi.ts). The
 * long-removed AJP is rejected like any other unknown value rather than proxied as HTTP.
 */
export const backendProtocolNames = ['HTTP', 'HTTPS', 'GRPC', 'GRPCS', 'AUTO_HTTP', 'FCGI'] as const;
export type BackendProtocolName = (typeof backendProtocolNames)[number];

export const backendProtocolAnnotations = {
  backendProtocol: rule<BackendProtocolName>({
    name: 'backend-protocol',
    section: 'TLS and backends',
    status: 'supported',
    schema: z.string().trim().toUpperCase().pipe(z.enum(backendProtocolNames)),
    defaultValue: 'HTTP',
    accepted: `one of ${backendProtocolNames.join(', ')} (case-insensitive)`,
    // Falling back to HTTP would send in plain text what the backend expects encrypted.
    failsClosed: true,
    note: '`HTTP`, `HTTPS`, `GRPC`, `GRPCS`, `AUTO_HTTP`, `FCGI` (`fastcgi_pass`, see `fastcgi-index`); an invalid value leaves the Ingress out rather than proxying in plain HTTP what the backend expects encrypted',
  }),
};
