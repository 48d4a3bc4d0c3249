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
    schema: cidrList,
    defaultValue: undefined,
    accepted: cidrListText,
    failsClosed: true,
  }),
  deny: rule<readonly string[] | undefined>({
    name: 'denylist-source-range',
    schema: cidrList,
    defaultValue: undefined,
    accepted: cidrListText,
    failsClosed: true,
  }),
  satisfy: rule<'all'>({
    name: 'satisfy',
    // `any` would let one passing check (an address in the allow-list) open a path that also asks for
    // a password or an external auth; nginx's default `all` is what every other check here assumes.
    schema: z.string().trim().toLowerCase().pipe(z.literal('all')),
    defaultValue: 'all',
    accepted: 'all (any is refused: it would let one passing check open the path)',
    failsClosed: true,
  }),
};
