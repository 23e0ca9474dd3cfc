import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { checkDeclarativeConfig, KONG_BUNDLED_PLUGINS } from '../../gateway/local/index.ts';
import { GATEWAY_CONFIG, PLUGINS_DIR } from '../helpers/gateway-files.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { DECK_VERSION } from '../../scripts/tools/deck-build.ts';
import { deckEnv } from '../../scripts/tools/deck-env.ts';

// No Docker engine here: docker-compose.yml and its wiring to kong.yml are checked statically.
type Service = {
  image?: string;
  user?: string;
  deploy?: { replicas?: number };
  networks?: Record<string, { ipv4_address?: string } | null>;
  expose?: string[];
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  command?: string[];
  healthcheck?: unknown;
};
const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  networks?: Record<string, { ipam?: { config?: Array<{ subnet?: string; ip_range?: string }> } }>;
};
const kongYml = readFileSync(join(REPO_ROOT, 'gateway/kong.yml'), 'utf8');
const platformYml = readFileSync(join(REPO_ROOT, 'gateway/platform/kong.yml'), 'utf8');
const { services } = compose;
// kong.yml and the platform's file as deck-sync renders them, with compose's DECK_ variables
// (their defaults: ${ANIMAL_STORE_HOSTS:-[]} is [])
const render = (text: string) =>
  parse(
    text.replace(/\$\{\{\s*env\s+"([^"]+)"\s*\}\}/g, (_, name: string) =>
      (services['deck-sync']!.environment?.[name] ?? 'http://placeholder').replace(/^\$\{[A-Z_]+:-(.*)\}$/, '$1'),
    ),
  ) as Record<string, any>;
const teamConfig = render(kongYml);
const platformConfig = render(platformYml);
const kongConfig = { ...teamConfig, plugins: [...(teamConfig.plugins ?? []), ...(platformConfig.plugins ?? [])] };

function pluginsOf(config: Record<string, any>): Array<{ name: string; config?: Record<string, unknown> }> {
  return [
    ...(config.plugins ?? []),
    ...(config.services ?? []).flatMap((s: any) => [...(s.plugins ?? []), ...(s.routes ?? []).flatMap((r: any) => r.plugins ?? [])]),
    ...(config.routes ?? []).flatMap((r: any) => r.plugins ?? []),
    ...(config.consumers ?? []).flatMap((c: any) => c.plugins ?? []),
  ];
}
const customPlugins = readdirSync(PLUGINS_DIR).filter((name) => existsSync(join(PLUGINS_DIR, name, 'handler.lua')));

test('the stack has every service the deployment needs, on Kong 3.9.3 OSS', (t) => {
  t.deepEqual(Object.keys(services).sort(), [
    'alertmanager', 'backend', 'deck-sync', 'grafana', 'kong', 'kong-certs', 'kong-cp', 'kong-lb', 'kong-lb-certs', 'kong-migrations', 'plan-limits',
    'portal', 'portal-database', 'postgres', 'prometheus', 'redis',
  ]);
  for (const name of ['kong', 'kong-cp', 'kong-certs', 'kong-lb-certs', 'kong-migrations']) t.is(services[name]!.image, 'kong:3.9.3', name);
  // The version `npm run deck` builds and the decK tests run (scripts/tools/deck-build.ts).
  t.is(services['deck-sync']!.image, `kong/deck:${DECK_VERSION}`);
});

test('every mounted file and build input exists', (t) => {
  for (const [name, service] of Object.entries(services)) {
    for (const volume of service.volumes ?? []) {
      const source = volume.split(':')[0]!;
      if (source.startsWith('.')) t.true(existsSync(join(REPO_ROOT, source)), `${name}: ${source}`);
    }
    if (service.build) {
      t.true(existsSync(join(REPO_ROOT, service.build.context, service.build.dockerfile)), `${name}: ${service.build.dockerfile}`);
    }
  }
});

test('depends_on names real services with valid conditions and converges (no cycles)', (t) => {
  const conditions = new Set(['service_started', 'service_healthy', 'service_completed_successfully']);
  for (const [name, service] of Object.entries(services)) {
    for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
      t.truthy(services[dependency], `${name} -> ${dependency}`);
      t.true(conditions.has(condition), `${name} -> ${dependency}: ${condition}`);
      if (condition === 'service_healthy') {
        const healthy = services[dependency]!.healthcheck ?? (services[dependency]!.build && readFileSync(join(REPO_ROOT, services[dependency]!.build.context, services[dependency]!.build.dockerfile), 'utf8').includes('HEALTHCHECK'));
        t.truthy(healthy, `${dependency} needs a health check`);
      }
    }
  }
  const visiting = new Set<string>();
  const visit = (name: string): void => {
    if (visiting.has(name)) throw new Error(`dependency cycle through ${name}`);
    visiting.add(name);
    for (const dependency of Object.keys(services[name]!.depends_on ?? {})) visit(dependency);
    visiting.delete(name);
  };
  for (const name of Object.keys(services)) t.notThrows(() => visit(name));
  t.is(services['deck-sync']!.depends_on!['kong-cp']!.condition, 'service_healthy');
  t.is(services['kong-cp']!.depends_on!['kong-migrations']!.condition, 'service_completed_successfully');
  t.is(services['kong-cp']!.depends_on!['kong-certs']!.condition, 'service_completed_successfully');
  t.is(services.kong!.depends_on!['kong-cp']!.condition, 'service_healthy');
  t.is(services.kong!.depends_on!.redis!.condition, 'service_healthy');
  t.is(services['kong-lb']!.depends_on!.kong!.condition, 'service_healthy');
});

test('the Admin API is published on the host loopback only, the proxy only through the balancer', (t) => {
  const published = Object.entries(services).flatMap(([name, service]) => (service.ports ?? []).map((port) => `${name} ${port}`));
  t.true(published.includes('kong-cp 127.0.0.1:8001:8001'));
  t.true(published.includes('kong-lb 443:443'));
  t.true(published.includes('kong-lb 80:80'));
  t.false(published.some((entry) => entry.startsWith('kong ')), 'the data planes are reached through kong-lb only');
  t.is(services['kong-cp']!.environment!.KONG_PROXY_LISTEN, 'off');
  t.is(services.kong!.environment!.KONG_ADMIN_LISTEN, 'off');
});

test('the custom plugins are mounted where Kong requires them from, enabled on every Kong, and the shared dict declared', (t) => {
  for (const name of ['kong', 'kong-cp']) {
    const env = services[name]!.environment!;
    const enabled = env.KONG_PLUGINS!.split(',');
    t.true(enabled.includes('bundled'));
    for (const plugin of customPlugins) t.true(enabled.includes(plugin), `${name}: ${plugin} in KONG_PLUGINS`);
    const luaRoot = env.KONG_LUA_PACKAGE_PATH!.split(';')[0]!.replace('/?.lua', '');
    const mount = services[name]!.volumes!.find((v) => v.startsWith('./gateway/plugins:'))!.split(':')[1]!;
    t.is(mount, `${luaRoot}/kong/plugins`, `${name}: require "kong.plugins.<name>.handler" resolves into the mount`);
    // kong.yml's plugins: bundled with Kong 3.9 or ours, enabled
    for (const plugin of pluginsOf(kongConfig)) t.true(KONG_BUNDLED_PLUGINS.has(plugin.name) || enabled.includes(plugin.name), `${name}: ${plugin.name}`);
  }
  const dicts = services.kong!.environment!.KONG_NGINX_HTTP_LUA_SHARED_DICT!.split(';').map((d) => d.trim().split(/\s+/)[0]);
  for (const plugin of pluginsOf(kongConfig).filter((p) => p.name === 'animal-store-edge')) {
    // the schema's default where kong.yml sets none (the portal's edge plugin)
    const dict = (plugin.config!.dict_name as string | undefined) ?? 'animal_store_edge';
    t.true(dicts.includes(dict), `shared dict ${dict}`);
  }
});

test("the custom plugin's schema.lua declares every field kong.yml sets", async (t) => {
  // kong.yml as the gateway applies it: every plugin's config against its schema (the custom
  // plugin's schema.lua, read by the data plane's Lua), with the compose file's DECK_ values.
  t.true(pluginsOf(kongConfig).some((p) => customPlugins.includes(p.name)));
  const env = Object.fromEntries(
    Object.entries(services['deck-sync']!.environment ?? {}).map(([name, value]) => [name, value.replace(/^\$\{[A-Z_]+:-(.*)\}$/, '$1')]),
  );
  const summary = await checkDeclarativeConfig({ configFile: GATEWAY_CONFIG, pluginsDir: PLUGINS_DIR, env });
  t.true(summary.created > 0);
});

test('decK gets every DECK_ variable kong.yml and the platform file reference', (t) => {
  const referenced = [...`${kongYml}${platformYml}`.matchAll(/\$\{\{\s*env\s+"([^"]+)"\s*\}\}/g)].map((m) => m[1]!);
  t.true(referenced.length > 0);
  for (const name of referenced) t.truthy(services['deck-sync']!.environment?.[name], name);
});

test('hybrid mode: a control plane and at least two data planes sharing the cluster certificate', (t) => {
  const cp = services['kong-cp']!;
  const dp = services.kong!;
  t.is(cp.environment!.KONG_ROLE, 'control_plane');
  t.is(cp.environment!.KONG_DATABASE, 'postgres');
  t.true((dp.deploy?.replicas ?? 1) >= 2, 'two data planes or more');
  t.is(dp.environment!.KONG_ROLE, 'data_plane');
  t.is(dp.environment!.KONG_DATABASE, 'off');
  const clusterPort = cp.environment!.KONG_CLUSTER_LISTEN!.split(':').pop();
  t.is(dp.environment!.KONG_CLUSTER_CONTROL_PLANE, `kong-cp:${clusterPort}`);
  // kong/conf_loader/parse.lua: both roles need cluster_cert and cluster_cert_key, the same pair (cluster_mtls shared)
  for (const variable of ['KONG_CLUSTER_CERT', 'KONG_CLUSTER_CERT_KEY']) t.is(dp.environment![variable], cp.environment![variable], variable);
  const certsMount = (service: Service) => service.volumes!.find((v) => v.startsWith('kong-cluster-certs:'))!.split(':')[1];
  t.is(certsMount(cp), '/certs');
  t.is(certsMount(dp), '/certs');
  t.true(dp.environment!.KONG_CLUSTER_CERT!.startsWith('/certs/'));
  const certs = services['kong-certs']!;
  t.is(certsMount(certs), '/certs');
  t.regex(certs.command!.join(' '), /kong hybrid gen_cert \/certs\/cluster\.crt \/certs\/cluster\.key/);
});

test('the portal keeps its store in its own database on the stack\'s PostgreSQL, made by a one-shot before it starts', (t) => {
  const portal = services.portal!;
  const init = services['portal-database']!;
  // the password beside the URL, never in it (portal-database.test.ts signs in with one that would break a URL)
  t.is(portal.environment!.PORTAL_DATABASE_URL, 'postgres://portal@postgres:5432/portal');
  t.is(portal.environment!.PGPASSWORD, '${PORTAL_PG_PASSWORD:-portal}');
  t.is(init.environment!.PORTAL_PG_PASSWORD, portal.environment!.PGPASSWORD, 'the password the portal signs in with');
  t.is(portal.depends_on!['portal-database']!.condition, 'service_completed_successfully');
  t.is(init.depends_on!.postgres!.condition, 'service_healthy');
  t.is(init.image, services.postgres!.image, 'psql of the server\'s own version');
  t.is(init.environment!.PGHOST, 'postgres');
  t.is(init.environment!.PGUSER, services.postgres!.environment!.POSTGRES_USER);
  t.deepEqual(init.volumes, ['./deploy/postgres/portal-database.sh:/init/portal-database.sh:ro']);
  t.is(portal.volumes, undefined, 'no SQLite volume: nothing of the store is per replica');
});

test('Redis is back, with a health check, and kong.yml counts there through the DECK_ variables', (t) => {
  const redis = services.redis!;
  t.regex(redis.image!, /^redis:\d/);
  t.deepEqual((redis.healthcheck as { test: string[] }).test, ['CMD', 'redis-cli', 'ping']);
  // every key expires; the memory bound drops the ones closest to expiry first
  t.regex(redis.command!.join(' '), /--maxmemory \S+ --maxmemory-policy volatile-ttl/);
  const deckEnv = services['deck-sync']!.environment!;
  t.is(deckEnv.DECK_RATE_LIMIT_POLICY, 'redis');
  t.is(deckEnv.DECK_RATE_LIMIT_REDIS_HOST, 'redis');
  t.is(deckEnv.DECK_RATE_LIMIT_REDIS_PORT, '6379');
  t.deepEqual(redis.expose, ['6379']);
  // what kong.yml does with them: every rate-limiting plugin and the edge plugin's bans
  const counted = pluginsOf(parse(kongYml, { merge: true }) as Record<string, any>).filter((p) => p.name === 'rate-limiting' || p.name === 'animal-store-edge');
  t.true(counted.length >= 3);
  for (const plugin of counted) {
    t.is(plugin.config!.policy, '${{ env "DECK_RATE_LIMIT_POLICY" }}', plugin.name);
    t.deepEqual(plugin.config!.redis, { host: '${{ env "DECK_RATE_LIMIT_REDIS_HOST" }}', port: '${{ env "DECK_RATE_LIMIT_REDIS_PORT" }}' }, plugin.name);
  }
});

test('behind the load balancer: the data planes trust its address only, and it forwards the client', (t) => {
  const lb = services['kong-lb']!;
  const address = lb.networks!.default!.ipv4_address!;
  const subnet = compose.networks!.default!.ipam!.config![0]!.subnet!;
  const [network, bits] = subnet.split('/');
  t.is(bits, '24');
  t.is(address.split('.').slice(0, 3).join('.'), network!.split('.').slice(0, 3).join('.'), `${address} in ${subnet}`);
  // Docker hands out dynamic addresses from ip_range (the whole subnet without one), a fixed one
  // from anywhere in the subnet: the range keeps every fixed address from a container started first.
  const ipRange = compose.networks!.default!.ipam!.config![0]!.ip_range;
  t.truthy(ipRange, 'ip_range set');
  const inCidr = (ip: string, cidr: string) => {
    const toInt = (a: string) => a.split('.').reduce((n, part) => n * 256 + Number(part), 0);
    const [base, size] = cidr.split('/');
    const block = 2 ** (32 - Number(size));
    return Math.floor(toInt(ip) / block) === Math.floor(toInt(base!) / block);
  };
  t.true(inCidr(ipRange!.split('/')[0]!, subnet) && Number(ipRange!.split('/')[1]) > Number(bits), `${ipRange} within ${subnet}`);
  const fixed = Object.values(services)
    .flatMap((service) => Object.values(service.networks ?? {}).map((n) => n?.ipv4_address))
    .filter((a) => a !== undefined);
  t.deepEqual(fixed, [address], 'the balancer is the only fixed address');
  for (const ip of fixed) t.false(inCidr(ip, ipRange!), `${ip} outside ${ipRange}`);
  const env = services.kong!.environment!;
  // Kong's trusted_ips / real_ip_header / real_ip_recursive (kong/templates/kong_defaults.lua):
  // nothing trusted by default; here the balancer alone.
  t.is(env.KONG_TRUSTED_IPS, address);
  t.is(env.KONG_REAL_IP_HEADER, 'X-Forwarded-For');
  t.is(env.KONG_REAL_IP_RECURSIVE, 'on');
  const mount = lb.volumes!.find((v) => v.startsWith('./deploy/nginx/'))!;
  t.is(mount.split(':')[1], '/etc/nginx/nginx.conf');
  const conf = readFileSync(join(REPO_ROOT, mount.split(':')[0]!), 'utf8');
  const proxyPort = env.KONG_PROXY_LISTEN!.split(':').pop();
  t.regex(conf, new RegExp(`server kong:${proxyPort} resolve`));
  t.regex(conf, /resolver 127\.0\.0\.11 /);
  t.regex(conf, /proxy_set_header X-Forwarded-For\s+\$proxy_add_x_forwarded_for;/);
  t.regex(conf, /listen 443 ssl /);
  t.regex(conf, /listen 80 /);
  t.regex(conf, /proxy_set_header X-Forwarded-Proto \$scheme;/);
});

test("the balancer's certificate: the operator's directory, else the self-signed one kong-lb-certs makes once", (t) => {
  const lb = services['kong-lb']!;
  const certs = services['kong-lb-certs']!;
  const tlsVolume = '${ANIMAL_STORE_TLS_DIR:-kong-lb-tls}';
  t.true(lb.volumes!.includes(`${tlsVolume}:/etc/nginx/tls:ro`));
  t.true(certs.volumes!.includes(`${tlsVolume}:/tls`));
  t.true('kong-lb-tls' in (parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8')) as { volumes: Record<string, unknown> }).volumes);
  t.is(lb.depends_on!['kong-lb-certs']!.condition, 'service_completed_successfully');
  // made only when the directory holds none, by Kong itself (kong prepare's default certificate)
  t.regex(certs.command!.join(' '), /\[ -f \/tls\/tls\.crt \] \|\| \{ kong prepare -p (\S+) && cp \1\/ssl\/kong-default\.key \/tls\/tls\.key && cp \1\/ssl\/kong-default\.crt \/tls\/tls\.crt; \}/);
  const conf = readFileSync(join(REPO_ROOT, 'deploy/nginx/kong-lb.conf'), 'utf8');
  t.regex(conf, /ssl_certificate\s+\/etc\/nginx\/tls\/tls\.crt;/);
  t.regex(conf, /ssl_certificate_key\s+\/etc\/nginx\/tls\/tls\.key;/);
  t.is(services['deck-sync']!.environment!.DECK_ANIMAL_STORE_HTTPS_ONLY, 'true');
});

test("deck-sync lints our file before any sync, then syncs the platform's file and ours, each within its select tag", (t) => {
  const deck = services['deck-sync']!;
  const script = deck.volumes!.find((v) => v.endsWith(':/deck/sync.sh:ro'))!.split(':')[0]!;
  t.deepEqual((deck as Service & { entrypoint?: string[] }).entrypoint, ['/bin/sh', '/deck/sync.sh']);
  const steps = readFileSync(join(REPO_ROOT, script), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('deck '));
  t.deepEqual(
    steps.map((line) => line.split(' ').slice(0, 3).join(' ')),
    ['deck file lint', 'deck file render', 'deck file lint', 'deck gateway sync', 'deck gateway sync'],
  );
  t.regex(steps[0]!, /-s \/deck\/kong\.yml \/deck\/lint\/team\.yaml$/);
  t.regex(steps[1]!, /--populate-env-vars \/deck\/kong\.yml -o (\S+)$/);
  t.regex(steps[2]!, /--fail-severity "\$\{LINT_FAIL_SEVERITY:-error\}" \/deck\/lint\/hosts\.yaml$/);
  t.regex(steps[3]!, /\/deck\/platform\/kong\.yml$/);
  t.regex(steps[4]!, /\/deck\/kong\.yml$/);
  t.true(deck.volumes!.includes('./gateway/lint:/deck/lint:ro'));
  t.is(deck.environment!.DECK_KONG_ADDR, 'http://kong-cp:8001');
  // each file names its own select tag: the two syncs never delete each other's entities
  t.deepEqual(teamConfig._info.select_tags, ['animal-store']);
  t.deepEqual(platformConfig._info.select_tags, ['platform']);
  t.deepEqual(teamConfig.plugins ?? [], [], 'no global plugin in our file');
});

test("operations.md's diff gives decK every value deck-sync gets: npm run deck fills none with npm start's", (t) => {
  const operations = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
  const block = /```sh\n((?:(?!```)[\s\S])*npm run deck -- gateway diff[^\n]*)\n\s*```/.exec(operations)![1]!;
  const assigned = Object.fromEntries([...block.matchAll(/\b(DECK_[A-Z_]+)=("[^"]*"|\S+)/g)].map((m) => [m[1]!, m[2]!.replace(/^"(.*)"$/, '$1')]));
  // DECK_KONG_ADDR is kong-cp on compose's network; from the host, --kong-addr and the published port
  const { DECK_KONG_ADDR, ...expected } = Object.fromEntries(Object.entries(services['deck-sync']!.environment!).filter(([name]) => name.startsWith('DECK_')));
  t.truthy(DECK_KONG_ADDR);
  t.deepEqual(assigned, expected);
  t.regex(block, new RegExp(`--kong-addr http://${services['kong-cp']!.ports![0]!.split(':').slice(0, 2).join(':')} gateway/kong\\.yml$`));
  const args = block.slice(block.indexOf('npm run deck -- ') + 'npm run deck -- '.length).split(' ');
  const env = Object.fromEntries(Object.entries(assigned).map(([name, value]) => [name, value.replace(/^\$\{[A-Z_]+:-(.*)\}$/, '$1')]));
  t.deepEqual(deckEnv(args, env).filled, []);
});

test("operations.md's KONG_PLUGINS are compose's", (t) => {
  const operations = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
  const mentioned = [...operations.matchAll(/`KONG_PLUGINS=([^`]+)`/g)].map((m) => m[1]);
  t.deepEqual(mentioned, [services['kong-cp']!.environment!.KONG_PLUGINS]);
  t.is(services.kong!.environment!.KONG_PLUGINS, services['kong-cp']!.environment!.KONG_PLUGINS);
});

test('the control plane pushes configuration every second (db_update_frequency), not every 5', (t) => {
  t.is(services['kong-cp']!.environment!.KONG_DB_UPDATE_FREQUENCY, '1');
});
