/**
 * nginx locations for an Ingress path. Prefix matching is element-wise: `/foo` matches `/foo` and
 * `/foo/bar` but not `/foobar`, which takes an exact location plus a `/foo/` prefix location.
 */
export function locationsFor(
  pathType: 'Exact' | 'Prefix' | 'ImplementationSpecific',
  path: string,
): { modifier: '=' | ''; path: string; exact: boolean }[] {
  if (pathType === 'Exact') return [{ modifier: '=', path, exact: true }];
  if (pathType === 'ImplementationSpecific') return [{ modifier: '', path, exact: false }];
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '') return [{ modifier: '', path: '/', exact: false }];
  return [
    { modifier: '=', path: trimmed, exact: false },
    { modifier: '', path: `${trimmed}/`, exact: false },
  ];
}
