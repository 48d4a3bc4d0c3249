import type { Diagnostic } from '../../model/diagnostics.js';
import { sameValue } from '../../model/objects.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { buildStream, type StreamInput, type StreamParts } from './sni.js';

/**
 * The stream parts of the last build, for the next: the cluster mode builds the stream for every change,
 * and at 10,000 hosts that was 30 ms though a change of one Ingress path leaves it the same. It is the same
 * while the hosts it routes are equal (the settled hosts of an unchanged Ingress are the same objects, see
 * `HostSettleMemo`) and the settings it reads are equal. Gateway listeners and host ownership are not
 * kept across builds as the same objects, so a build with either makes the stream again.
 */
export class StreamMemo {
  /** What the last stream was made of and what it reported (not the input itself: that holds its build's report). */
  private last:
    | {
        readonly hosts: Pick<StreamInput, 'passthrough' | 'terminated'>;
        readonly settings: string;
        readonly parts: StreamParts;
        readonly diagnostics: readonly Diagnostic[];
      }
    | undefined;

  build(input: StreamInput): StreamParts {
    if (input.gatewayPorts.length > 0 || input.hostOwnership) {
      this.last = undefined;
      return buildStream(input);
    }
    const settings = JSON.stringify([
      input.handoff,
      input.httpsPort,
      input.runDir,
      input.httpsSocket,
      input.acceptProxyProtocol,
      input.trustedProxies,
      [...(input.backendProxyProtocol ?? [])],
    ]);
    const last = this.last;
    if (last && last.settings === settings && sameHosts(last.hosts.passthrough, input.passthrough) && sameHosts(last.hosts.terminated, input.terminated)) {
      input.report.diagnostics.push(...last.diagnostics);
      this.last = { ...last, hosts: { passthrough: input.passthrough, terminated: input.terminated } };
      return last.parts;
    }
    const from = input.report.diagnostics.length;
    const parts = buildStream(input);
    this.last = { hosts: { passthrough: input.passthrough, terminated: input.terminated }, settings, parts, diagnostics: input.report.diagnostics.slice(from) };
    return parts;
  }
}

/**
 * Equal hosts, owned by the same resource: a changed Ingress is a new object, but the stream reads of its
 * owner only what names it and orders it (precedence.ts), which an edit leaves as it was.
 */
function sameHosts<T extends { readonly owner: SourceObject }>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((host, i) => host === b[i] || sameHost(host, b[i]!));
}

function sameHost<T extends { readonly owner: SourceObject }>(a: T, b: T): boolean {
  const keys = Object.keys(a) as (keyof T)[];
  return keys.length === Object.keys(b).length && keys.every((key) => (key === 'owner' ? sameOwner(a.owner, b.owner) : Object.hasOwn(b, key) && sameValue(a[key], b[key])));
}

function sameOwner(a: SourceObject, b: SourceObject): boolean {
  return (
    a === b ||
    (a.kind === b.kind &&
      a.metadata.namespace === b.metadata.namespace &&
      a.metadata.name === b.metadata.name &&
      a.metadata.creationTimestamp === b.metadata.creationTimestamp &&
      a.origin?.file === b.origin?.file &&
      a.origin?.line === b.origin?.line)
  );
}
