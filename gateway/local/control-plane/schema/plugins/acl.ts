import * as T from '../typedefs.ts';
import { configRecord, definePlugin } from './plugin-schema.ts';

const nonEmpty = (list: readonly string[] | null) => list !== null && list.length > 0;
const ALLOW_DENY = "'config.allow', 'config.deny'";

/**
 * kong/plugins/acl/schema.lua (3.9.3). Its entity_checks: only_one_of and at_least_one_of
 * { config.allow, config.deny }, where an empty list counts as not given (is_nonempty). With
 * neither given both fail, and Kong reports both, in that order (kong/db/schema/init.lua:592-605,
 * 672-690).
 */
export const acl = definePlugin({
  name: 'acl',
  noConsumer: true,
  protocols: T.protocolsHttp(),
  config: configRecord({
    allow: T.array(T.string()),
    deny: T.array(T.string()),
    hide_groups_header: T.boolean({ required: true, default: false }),
    always_use_authenticated_groups: T.boolean({ required: true, default: false }),
  }),
  check(config) {
    const allow = nonEmpty(config.allow);
    const deny = nonEmpty(config.deny);
    const onlyOne = `exactly one of these fields must be non-empty: ${ALLOW_DENY}`;
    if (!allow && !deny) return [onlyOne, `at least one of these fields must be non-empty: ${ALLOW_DENY}`];
    return allow && deny ? onlyOne : undefined;
  },
});
