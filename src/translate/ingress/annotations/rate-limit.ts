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
  rps: rule<number | undefined>({ name: 'limit-rps', schema: rate, defaultValue: undefined, accepted: rateText, failsClosed: true }),
  rpm: rule<number | undefined>({ name: 'limit-rpm', schema: rate, defaultValue: undefined, accepted: rateText, failsClosed: true }),
  connections: rule<number | undefined>({
    name: 'limit-connections',
    schema: rate,
    defaultValue: undefined,
    accepted: rateText,
    failsClosed: true,
  }),
  burstMultiplier: rule({
    name: 'limit-burst-multiplier',
    schema: integerInRange(1, 1000),
    defaultValue: 5,
    accepted: 'an integer from 1 to 1000',
    failsClosed: true,
  }),
  allowlist: rule<readonly string[]>({
    name: 'limit-allowlist',
    aliases: ['limit-whitelist'],
    schema: cidrList,
    defaultValue: [],
    accepted: cidrListText,
    failsClosed: true,
  }),
  rate: rule<number | undefined>({
    name: 'limit-rate',
    schema: integerInRange(0, maxRate),
    defaultValue: undefined,
    accepted: `kilobytes per second from 0 (off) to ${maxRate}`,
    failsClosed: true,
  }),
  rateAfter: rule<number | undefined>({
    name: 'limit-rate-after',
    schema: integerInRange(0, maxRate),
    defaultValue: undefined,
    accepted: `kilobytes from 0 to ${maxRate}`,
    failsClosed: true,
  }),
};
