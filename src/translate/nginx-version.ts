/** What the targeted nginx can do, from its version (`--nginx-version`, or `nginx -v` with `auto`). */
export interface NginxFeatures {
  /** `pass` in the stream module (1.25.5): hands a connection to another listener without a copy. */
  readonly streamPass: boolean;
  /** The `http2` directive (1.25.1); `listen … http2` is deprecated from then on and warns. */
  readonly http2Directive: boolean;
  /** `proxy_protocol v2` in the stream module (1.31.4); before, `proxy_protocol on` writes version 1 only. */
  readonly proxyProtocolV2: boolean;
  /** `server … resolve` and `service=` in upstream blocks of the free nginx (1.27.3): endpoints re-resolved without a reload. */
  readonly upstreamResolve: boolean;
}

export function nginxFeatures(version: string): NginxFeatures {
  return { streamPass: atLeast(version, '1.25.5'), http2Directive: atLeast(version, '1.25.1'), proxyProtocolV2: atLeast(version, '1.31.4'), upstreamResolve: atLeast(version, '1.27.3') };
}

/** `version >= minimum`, both dotted `X.Y.Z`. */
export function atLeast(version: string, minimum: string): boolean {
  const a = version.split('.').map(Number);
  const b = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}
