/** nginx's `map` reads these words as its own parameters; as keys they take a leading backslash. */
const mapParameters: ReadonlySet<string> = new Set(['default', 'hostnames', 'include', 'volatile']);

/** `name` as a key of an nginx `map` block. */
export function mapKey(serverName: string): string {
  return mapParameters.has(serverName) ? `\\${serverName}` : serverName;
}
