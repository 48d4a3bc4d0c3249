/**
 * ConfigMap `log-format-upstream`: the access log's format, in nginx variables and literal text. It is
 * rendered inside a single-quoted `log_format` string, so only printable ASCII without quotes and
 * backslashes passes, and only variables that exist in every config we render (nginx refuses to load a
 * format with an unknown one). ingress-nginx's own variables map to ours: `$req_id` is the request id
 * sent to the backend, `$the_real_ip` the client address.
 */
import { z } from 'zod';
import { withBracedVariables } from '../checks/allowlist.js';

const ingressNginxVariables: Readonly<Record<string, string>> = {
  req_id: 'i2n_request_id',
  the_real_ip: 'remote_addr',
  proxy_upstream_name: 'proxy_upstream_name',
  proxy_alternative_upstream_name: 'proxy_alternative_upstream_name',
};

const logVariable =
  /^((http|sent_http|upstream_http|cookie|arg)_[a-z0-9_]{1,64}|args|binary_remote_addr|body_bytes_sent|bytes_sent|connection|connection_requests|content_length|content_type|gzip_ratio|host|hostname|msec|pipe|query_string|realip_remote_addr|remote_addr|remote_port|remote_user|request|request_id|request_length|request_method|request_time|request_uri|scheme|server_addr|server_name|server_port|server_protocol|ssl_cipher|ssl_protocol|ssl_server_name|status|time_iso8601|time_local|upstream_addr|upstream_bytes_received|upstream_bytes_sent|upstream_connect_time|upstream_header_time|upstream_response_length|upstream_response_time|upstream_status|uri)$/;

export const maxLogFormatLength = 2048;

export const logFormat = z.string().transform((value, context) => {
  const fail = (message: string) => {
    context.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  if (value.trim() === '' || value.length > maxLogFormatLength) return fail(`is empty or longer than ${maxLogFormatLength} characters`);
  if (!/^[\x20-\x7e]*$/.test(value) || /['\\]/.test(value)) return fail('has a quote, a backslash, or a character that is not printable ASCII');
  const format = withBracedVariables(value, (name) => ingressNginxVariables[name] ?? (logVariable.test(name) ? name : undefined));
  if (format === undefined) return fail('has a "$" that is not one of the variables the log may use (nginx\'s request and upstream variables, $http_<name>, $req_id, $proxy_upstream_name, …)');
  return format;
});

export const logFormatText = 'nginx variables and text in printable ASCII without quotes or backslashes, such as $remote_addr "$request" $status $request_time';
