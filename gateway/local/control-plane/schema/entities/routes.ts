import { defineEntity, type EntityOf } from '../entity.ts';
import { wildcardHostError, wildcardSniError } from '../hosts.ts';
import { pathRegexError, regexError } from '../path-regex.ts';
import * as T from '../typedefs.ts';

const TLS_PROTOCOLS: ReadonlySet<string> = new Set(['grpcs', 'https', 'tls', 'tls_passthrough']);

const endpoint = () => T.record({ ip: T.string(), port: T.integer() }, { required: true });

/** kong/db/schema/entities/routes.lua (3.9.3), traditional_compatible flavor. */
export const routes = defineEntity({
  name: 'routes',
  primary_key: ['id'],
  endpoint_key: 'name',
  subschema_key: 'protocols',
  schema: T.entity({
    id: T.uuid(),
    created_at: T.autoTimestamp(),
    updated_at: T.autoTimestamp(),
    name: T.utf8Name(),
    protocols: T.set(T.string({ one_of: T.PROTOCOLS }), {
      required: true,
      len_min: 1,
      mutually_exclusive_subsets: [['http', 'https'], ['tcp', 'tls', 'udp'], ['tls_passthrough'], ['grpc', 'grpcs']],
      default: ['http', 'https'],
    }),
    https_redirect_status_code: T.integer({ required: true, default: 426, one_of: [426, 301, 302, 307, 308] }),
    strip_path: T.boolean({ required: true, default: true }),
    preserve_host: T.boolean({ required: true, default: false }),
    request_buffering: T.boolean({ required: true, default: true }),
    response_buffering: T.boolean({ required: true, default: true }),
    tags: T.tags(),
    service: T.foreign('services'),
    snis: T.set(T.string({ custom: wildcardSniError })),
    sources: T.set(endpoint()),
    destinations: T.set(endpoint()),
    methods: T.set(T.string({ match: /^[A-Z]+$/ })),
    hosts: T.array(T.string({ custom: wildcardHostError })),
    paths: T.array(T.string({ match: /^[/~]/ })),
    headers: T.map(T.string(), T.array(T.string())),
    regex_priority: T.integer({ default: 0 }),
    path_handling: T.string({ default: 'v0', one_of: ['v0', 'v1'] }),
  }),
  check(route, errors) {
    // routes.lua's conditional entity check: SNIs only with a TLS protocol.
    if (route.snis && route.snis.length > 0 && route.protocols.some((protocol) => !TLS_PROTOCOLS.has(protocol))) {
      errors.snis = 'length must be 0';
      errors['@entity'] = "'snis' can only be set when 'protocols' is 'grpcs', 'https', 'tls' or 'tls_passthrough'";
    }
    const set = (v: unknown) =>
      v !== null && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
    if (![route.methods, route.hosts, route.headers, route.paths, route.snis].some(set)) {
      // routes_subschemas.lua (http): with https, snis count too and the message names https.
      errors['@entity'] = route.protocols.includes('https')
        ? "must set one of 'methods', 'hosts', 'headers', 'paths', 'snis' when 'protocols' is 'https'"
        : "must set one of 'methods', 'hosts', 'headers', 'paths' when 'protocols' is 'http'";
    }
    for (const [name, values] of Object.entries(route.headers ?? {})) {
      // The headers' keys match_none ^[Hh][Oo][Ss][Tt]$.
      if (/^host$/i.test(name)) errors.headers = "cannot contain 'host' header, which must be specified in the 'hosts' attribute";
      // kong/router/transform.lua: a value starting with "~*" is a case-insensitive regex.
      values.forEach((value, i) => {
        const problem = value.startsWith('~*') ? regexError(value.slice(2)) : undefined;
        if (problem) errors[`headers.${name}.${i + 1}`] = problem;
      });
    }
    // traditional_compatible validates every route with the ATC router (routes.lua validate_route).
    route.paths?.forEach((path, i) => {
      const problem = path.startsWith('~') ? pathRegexError(path) : undefined;
      if (problem) errors[`paths.${i + 1}`] = problem;
    });
  },
  unsupported: {
    sources: 'stream routes are not implemented',
    destinations: 'stream routes are not implemented',
  },
  declarative: { key: [['name']], keyRequired: true, topLevel: true, nestedIn: ['service'] },
  snapshot: {
    description:
      "kong/db/schema/entities/routes.lua, traditional_compatible flavor. Paths starting with '~' are regexes (PCRE on the data plane); " +
      "header values starting with '~*' too. snis apply to requests over TLS only ('*.x' and 'x.*' match by suffix and prefix). " +
      "Equal priorities go to the greater id, as Kong's atc-router orders them; " +
      "created_at, updated_at (unix seconds) and tags are informational: kong.router.get_route() has them, as Kong's does.",
    fields: [
      'id', 'name', 'service', 'protocols', 'methods', 'hosts', 'paths', 'headers', 'snis', 'strip_path', 'preserve_host',
      'regex_priority', 'path_handling', 'https_redirect_status_code', 'request_buffering', 'response_buffering', 'created_at',
      'updated_at', 'tags',
    ],
    // What Kong's router reads for null.
    fallback: { regex_priority: 0, path_handling: 'v0' },
    narrow: { protocols: T.set(T.string({ one_of: ['http', 'https'] }), { required: true, len_min: 1 }) },
  },
  refusedInput: {
    expression: 'the expressions router flavor is not implemented (Kong 3.9 defaults to traditional_compatible)',
    priority: 'expression route priority is not implemented',
  },
});

export type Route = EntityOf<typeof routes>;
