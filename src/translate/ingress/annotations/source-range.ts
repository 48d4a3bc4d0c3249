import { z } from 'zod';
import { cidrList, cidrListText } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * Who may reach the paths, by client address. They guard access, so a rejected value leaves the
 * Ingress out. Absent, the ConfigMap's `whitelist-source-range` / `denylist-source-range` apply.
 */
export const sourceRangeAnnotations = {
  allow: rule<readonly string[] | undefined>({
    name: 'allowlist-source-range',
    aliases: ['whitelist-source-range'],
    aliasNote: 'comma-separated CIDRs allowed to reach the paths (403 for others), on the real client address; alias of `allowlist-source-range`',
    section: 'Access control',
    status: 'supported',
    schema: cidrList,
    defaultValue: undefined,
    configMapKey: 'whitelist-source-range',
    accepted: cidrListText,
    failsClosed: true,
    note: 'as `whitelist-source-range` (which it wins over)',
  }),
  deny: rule<readonly string[] | undefined>({
    name: 'denylist-source-range',
    section: 'Access control',
    status: 'supported',
    schema: cidrList,
    defaultValue: undefined,
    configMapKey: 'denylist-source-range',
    accepted: cidrListText,
    failsClosed: true,
    note: 'comma-separated CIDRs refused with 403, checked before the allow-list',
  }),
  satisfy: rule<'all'>({
    name: 'satisfy',
    section: 'Access control',
    status: 'differs',
    // `any` would let one passing check (an address in the allow-list) open a path that also asks for
    // a password or an external auth; nginx's default `all` is what every other check here assumes.
    schema: z.string().trim().toLowerCase().pipe(z.literal('all')),
    defaultValue: 'all',
    accepted: 'all (any is refused: it would let one passing check open the path)',
    failsClosed: true,
    note: '`all` only (every check must pass); `any` is refused, because it would let one passing check open the path',
  }),
};
