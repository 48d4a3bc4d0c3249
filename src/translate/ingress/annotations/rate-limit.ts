import { cidrList, cidrListText, integerInRange } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * Rate and connection limits per client address. They protect a backend (and the nginx every tenant
 * shares) from floods, so a rejected value leaves the Ingress out rather than dropping the limit.
 */

const maxRate = 1_000_000;

const rate = integerInRange(1, maxRate);
const rateText = `an integer from 1 to ${maxRate}`;

export const rateLimitAnnotations = {
  rps: rule<number | undefined>({
    name: 'limit-rps',
    section: 'Access control',
    status: 'supported',
    schema: rate,
    defaultValue: undefined,
    accepted: rateText,
    failsClosed: true,
    note: 'requests per second per client address, burst `limit-rps × limit-burst-multiplier`, excess answered with ConfigMap `limit-req-status-code` (503)',
  }),
  rpm: rule<number | undefined>({
    name: 'limit-rpm',
    section: 'Access control',
    status: 'supported',
    schema: rate,
    defaultValue: undefined,
    accepted: rateText,
    failsClosed: true,
    note: 'requests per minute per client address, as `limit-rps`',
  }),
  connections: rule<number | undefined>({
    name: 'limit-connections',
    section: 'Access control',
    status: 'supported',
    schema: rate,
    defaultValue: undefined,
    accepted: rateText,
    failsClosed: true,
    note: 'concurrent connections per client address, excess answered with ConfigMap `limit-conn-status-code` (503)',
  }),
  burstMultiplier: rule({
    name: 'limit-burst-multiplier',
    section: 'Access control',
    status: 'supported',
    schema: integerInRange(1, 1000),
    defaultValue: 5,
    accepted: 'an integer from 1 to 1000',
    failsClosed: true,
    note: 'burst size as a multiple of the rate',
  }),
  allowlist: rule<readonly string[]>({
    name: 'limit-allowlist',
    aliases: ['limit-whitelist'],
    aliasNote: 'comma-separated CIDRs the rate limits do not apply to; alias of `limit-allowlist`',
    section: 'Access control',
    status: 'supported',
    schema: cidrList,
    defaultValue: [],
    accepted: cidrListText,
    failsClosed: true,
    note: 'as `limit-whitelist` (which it wins over)',
  }),
  rate: rule<number | undefined>({
    name: 'limit-rate',
    section: 'Access control',
    status: 'supported',
    schema: integerInRange(0, maxRate),
    defaultValue: undefined,
    defaultWords: '`0` (off)',
    accepted: `kilobytes per second from 0 (off) to ${maxRate}`,
    failsClosed: true,
    note: 'response rate per connection, KB/s',
  }),
  rateAfter: rule<number | undefined>({
    name: 'limit-rate-after',
    section: 'Access control',
    status: 'supported',
    schema: integerInRange(0, maxRate),
    defaultValue: undefined,
    defaultWords: '`0`',
    accepted: `kilobytes from 0 to ${maxRate}`,
    failsClosed: true,
    note: 'KB sent before `limit-rate` applies',
  }),
};
