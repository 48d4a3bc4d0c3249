/**
 * The floor of the request metrics' cost: a config without them ("off") plus, written by hand, one
 * buffered log line per request with the fields the metrics read (templates/partials/requestLog.hbs)
 * but no label per location. It is the least nginx can do to log what the metrics need, so the share
 * of a request it costs bounds what the product can reach.
 */
const floorFields = '$status|$request_method|$request_length|$request_time|$bytes_sent|$upstream_connect_time|$upstream_header_time|$upstream_response_time|$proxy_host|$host';

/** `offConfig` (a rendered config without request logs) with the floor's line written to `logFile`. */
export function withFloorLog(offConfig: string, logFile: string): string {
  const line = '    access_log off;\n';
  if (!offConfig.includes(line)) throw new Error('the config has no "access_log off;" line for the floor to replace');
  return offConfig.replace(line, `    log_format floor escape=none '${floorFields}';\n    access_log ${logFile} floor buffer=64k flush=1s;\n`);
}
