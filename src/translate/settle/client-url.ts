import type { MapBlock } from '../../model/nginx.js';
import type { HttpExtensionRegistry } from './extensions.js';

/**
 * The request's own URL for redirects we build (`app-root`, the `rd=` of `auth-signin`), from parts a
 * client cannot bend. `$http_host` is the Host header as sent: nginx checks only the name before a `:`,
 * so `Host: app.example.test:@evil.example` reaches the app's server and a Location built from it sends
 * the browser to evil.example. The name comes from `$host` (checked, port removed) and the port only
 * when it is digits.
 */
export const requestPortVariable = 'i2n_request_port';
const requestPort: MapBlock = {
  comment: 'the port of the Host header, when it is one (redirects to the request\'s own URL)',
  source: '$http_host',
  variable: requestPortVariable,
  entries: [{ key: '"~^[^:]*(:[0-9]{1,5})$"', value: '$1' }],
  defaultValue: '""',
};

/** `$scheme://$host` and the port the client named: the request's own origin. */
export const requestOrigin = `$scheme://$host$${requestPortVariable}`;

/** Defines the port map for a location that uses `requestOrigin`; returns its reference. */
export function useRequestOrigin(extensions: HttpExtensionRegistry): string {
  extensions.define(requestPortVariable, { maps: [requestPort] });
  return requestPortVariable;
}

/**
 * `$request_uri` as one query value: stock nginx has no URL-encoding, so the `&` that would end the
 * value (`/x?a=1&rd=https://evil.example` gave the sign-in service a second `rd`) is written `%26`, up to
 * `ampersands` of them; past that, or with a `#` (which would end the URL), only the path is kept.
 */
export const returnUriVariable = 'i2n_return_uri';
const ampersands = 8;

function returnUriMaps(): MapBlock[] {
  const comment = 'the request URI as one query value of a redirect (auth-signin)';
  const step = (index: number) => `i2n_return_uri_${index}`;
  const maps: MapBlock[] = [];
  for (let index = 1; index <= ampersands; index++) {
    const source = index === 1 ? '$request_uri' : `$${step(index - 1)}`;
    maps.push({ comment, source, variable: step(index), entries: [{ key: '"~^([^&]*)&(.*)$"', value: '"$1%26$2"' }], defaultValue: source });
  }
  maps.push({
    comment,
    source: `$${step(ampersands)}`,
    variable: returnUriVariable,
    entries: [
      { key: '"~^[^&#]*$"', value: `$${step(ampersands)}` },
      { key: '"~^(/[^?&#]*)"', value: '$1' },
    ],
    defaultValue: '/',
  });
  return maps;
}

/** Defines the maps for a location whose sign-in redirect carries the request's URL; returns their reference. */
export function useReturnUri(extensions: HttpExtensionRegistry): string {
  extensions.define(returnUriVariable, { maps: returnUriMaps() });
  return returnUriVariable;
}

/** The groups above that a location's redirects (`app-root`, `auth-signin`) use. */
export function clientUrlReferences(redirects: readonly (string | undefined)[]): string[] {
  return [requestPortVariable, returnUriVariable].filter((variable) => redirects.some((text) => text?.includes(`$${variable}`)));
}
