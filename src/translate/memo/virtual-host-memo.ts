import type { NginxConfig, VirtualHost } from '../../model/nginx.js';
import { sameValue, withFields } from '../../model/objects.js';

/**
 * The model's hosts of the last build, by name. A host equal to what it was is handed on as that same
 * object, so that what comes after (render) can reuse what it made of it by identity instead of
 * comparing it again. The cluster mode keeps one across builds (translate.ts `TranslateMemo`).
 */
export class VirtualHostMemo {
  private last = new Map<string, VirtualHost>();

  /** `model`, its hosts equal to the last build's replaced by those objects. */
  kept(model: NginxConfig): NginxConfig {
    const next = new Map<string, VirtualHost>();
    const virtualHosts = model.http.virtualHosts.map((host) => {
      const earlier = this.last.get(host.serverName);
      const kept = earlier !== undefined && sameValue(earlier, host) ? earlier : host;
      next.set(host.serverName, kept);
      return kept;
    });
    this.last = next;
    return withFields(model, { http: withFields(model.http, { virtualHosts }) });
  }
}
