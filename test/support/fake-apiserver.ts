/**
 * A loopback fake of kube-apiserver for tests (see fake-apiserver/server.ts): start one with
 * `FakeApiServer.start()`, point a client at `writeKubeconfig()`, and `close()` it afterwards.
 */
export {
  FakeApiServer,
  type FakeApiServerOptions,
  type FaultSpec,
  type HangSpec,
  type ObjectRef,
  type ObservedRequest,
  type RequestVerb,
} from './fake-apiserver/server.js';
export { ApiError, type JsonObject, type JsonValue, type Status } from './fake-apiserver/status.js';
export type { WatchDescription } from './fake-apiserver/watch.js';
