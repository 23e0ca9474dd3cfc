import test from 'ava';
import { startFixture, type Fixture } from '../helpers/fixture.ts';

// How a list request's arguments are refused, as Kong 3.9.3's Admin API refuses them
// (kong/api/arguments.lua, kong/api/endpoints.lua, kong/db/errors.lua), transcribing
// spec/02-integration/04-admin_api.
let f: Fixture;

test.before(async () => {
  f = await startFixture('_format_version: "3.0"\n');
  for (const [username, tags] of [
    ['tagged-1', ['corp_ a', 'consumer_ 1']],
    ['tagged-2', ['corp_ a', 'consumer_ 2']],
  ] as const) {
    const created = await f.admin('/consumers', { method: 'POST', json: { username, tags } });
    if (created.status !== 201) throw new Error(`consumer ${username}: ${created.status} ${JSON.stringify(created.body)}`);
  }
});
test.after.always(async () => {
  await f?.dispose();
});

test('an invalid size or offset is code, name and message, no fields (09-routes_routes_spec.lua:544-584)', async (t) => {
  const size = await f.admin('/routes?size=x');
  t.is(size.status, 400);
  t.deepEqual(size.body, { code: 9, name: 'invalid size', message: 'size must be a number' });
  const offset = await f.admin('/routes?offset=x');
  t.is(offset.status, 400);
  t.deepEqual(offset.body, { code: 7, name: 'invalid offset', message: "'x' is not a valid offset: bad base64 encoding" });
});

test('tags: an empty filter cannot be null (14-tags_spec.lua:76-84, 03-consumers_routes_spec.lua:285-294)', async (t) => {
  const empty = await f.admin('/consumers?tags=');
  t.is(empty.status, 400);
  t.deepEqual(empty.body, {
    code: 11,
    name: 'invalid options',
    message: 'invalid option (tags: cannot be null)',
    options: { tags: 'cannot be null' },
  });
});

test('tags: mixing AND and OR, or a byte no tag holds, is invalid filter syntax (14-tags_spec.lua:131-157)', async (t) => {
  // a byte outside 0x20-0x7E and 0x80-0xF4 matches neither of endpoints.lua:44-51's patterns, so
  // the filter has no condition: dao/init.lua:209-212 (%FF and %F5 are no UTF-8 a tag may hold)
  for (const query of ['consumer_%203,consumer_%202/consumer_%201', 'consumer_%203/consumer_%202,consumer_%201', 'a%01b', '%FF', 'corp_%20a,%F5']) {
    const refused = await f.admin(`/consumers?tags=${query}`);
    t.is(refused.status, 400, query);
    t.is(refused.body.message, 'invalid option (tags: invalid filter syntax)', query);
  }
});

test('tags: AND, OR, a quoted empty string, more than 5 (14-tags_spec.lua:50-118, kong/db/dao/init.lua:216)', async (t) => {
  const count = async (query: string) => ((await f.admin(`/consumers?tags=${query}`)).body.data as unknown[]).length;
  t.is(await count('corp_%20a'), 2);
  t.is(await count('corp_%20a,consumer_%201'), 1);
  t.is(await count('consumer_%202/consumer_%201'), 2);
  t.is(await count("''"), 0);
  const six = await f.admin('/consumers?tags=a,b,c,d,e,f');
  t.is(six.status, 400);
  t.is(six.body.message, 'invalid option (tags: cannot query more than 5 tags)');
});

test('more than 1000 query arguments: 400 Too many arguments (21-truncated_arguments_spec.lua:53-65)', async (t) => {
  const query = Array.from({ length: 1001 }, (_, i) => `a=${i}`).join('&');
  const refused = await f.admin(`/plugins?${query}`);
  t.is(refused.status, 400);
  t.deepEqual(refused.body, { message: 'Too many arguments' });
  const accepted = await f.admin(`/plugins?${query.slice(0, query.lastIndexOf('&'))}`);
  t.is(accepted.status, 200);
});

test('a form of more than 1000 fields: 400 Too many arguments (21-truncated_arguments_spec.lua:35-51)', async (t) => {
  const items = Array.from({ length: 1001 }, (_, i) => `config.allow=${i}`);
  const refused = await f.admin('/plugins', {
    method: 'POST',
    body: `name=ip-restriction&${items.join('&')}`,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  t.is(refused.status, 400);
  t.deepEqual(refused.body, { message: 'Too many arguments' });
});

test('a tag may hold spaces and UTF-8, not , or / (14-tags_spec.lua:11-70, kong/db/schema/typedefs.lua:118-134)', async (t) => {
  const created = await f.admin('/consumers', { method: 'POST', json: { username: 'gorilla', tags: ['🦍', 'with space'] } });
  t.is(created.status, 201);
  const found = await f.admin(`/consumers?tags=${encodeURIComponent('🦍')}`);
  t.deepEqual((found.body.data as { username: string }[]).map((c) => c.username), ['gorilla']);
  const refused = await f.admin('/consumers', { method: 'POST', json: { username: 'slashed', tags: ['a/b'] } });
  t.is(refused.status, 400);
  t.deepEqual(refused.body.fields, { tags: ["invalid tag 'a/b': expected printable ascii (except `,` and `/`) or valid utf-8 sequences"] });
});

test('services and routes by utf-8 name and percent-escaped utf-8 name (10-services_routes_spec.lua:259-272, 09-routes_routes_spec.lua:655-668)', async (t) => {
  const service = await f.admin('/services', { method: 'POST', json: { name: '円', url: 'http://example.test' } });
  t.is(service.status, 201);
  t.deepEqual((await f.admin(`/services/${encodeURIComponent('円')}`)).body, service.body);
  const route = await f.admin('/routes', { method: 'POST', json: { name: '縦', paths: ['/utf8'] } });
  t.is(route.status, 201);
  t.deepEqual((await f.admin(`/routes/${encodeURIComponent('縦')}`)).body, route.body);
  const refused = await f.admin('/services', { method: 'POST', json: { name: 'a b', url: 'http://example.test' } });
  t.deepEqual(refused.body.fields, { name: "invalid value 'a b': the only accepted ascii characters are alphanumerics or ., -, _, and ~" });
});

test('an unknown protocol lists Kong 3.9.3\'s protocols, sorted (10-services_routes_spec.lua:880-890, 09-routes_routes_spec.lua:355-370)', async (t) => {
  const expected = 'expected one of: grpc, grpcs, http, https, tcp, tls, tls_passthrough, udp';
  const service = await f.admin('/services', { method: 'POST', json: { host: 'example.test', protocol: 'foo' } });
  t.deepEqual(service.body.fields, { protocol: expected });
  const route = await f.admin('/routes', { method: 'POST', json: { methods: ['GET'], protocols: ['foo', 'http'] } });
  t.deepEqual(route.body, { code: 2, name: 'schema violation', message: `schema violation (protocols.1: ${expected})`, fields: { protocols: [expected] } });
});

test('a foreign key by a name no entity has is code 13, foreign keys unresolved (09-routes_routes_spec.lua:396-416)', async (t) => {
  const refused = await f.admin('/routes', { method: 'POST', json: { methods: ['GET'], service: { name: 'non-existing' } } });
  t.is(refused.status, 400);
  const reason = `the foreign key cannot be resolved with '{name="non-existing"}' for an existing 'services' entity`;
  t.deepEqual(refused.body, {
    code: 13,
    name: 'foreign keys unresolved',
    message: `foreign key unresolved (service.name: ${reason})`,
    fields: { service: { name: reason } },
  });
});

test('/tags/{tag} that is not UTF-8 is 400 invalid utf-8 (14-tags_spec.lua:241-249, kong/db/dao/tags.lua:4-9)', async (t) => {
  const refused = await f.admin('/tags/%FF');
  t.is(refused.status, 400);
  t.deepEqual(refused.body, { code: 10, name: 'invalid unique tag', message: 'invalid utf-8 character sequence detected at position 1' });
  t.is((await f.admin(`/tags/corp_%20a?tags=invalid@tag`)).body.data.length, 2);
});

test('a next link carries the first tags argument escaped and size; a nested one neither, under the key as written (endpoints.lua:317-339, 366-374)', async (t) => {
  for (const username of ['paged-1', 'paged-2']) await f.admin('/consumers', { method: 'POST', json: { username, tags: ['é t', 'paging'] } });
  const first = await f.admin('/consumers?tags=%C3%A9+t&tags=other&size=1');
  t.is(first.status, 200);
  t.is(first.body.next, `/consumers?offset=${encodeURIComponent(first.body.offset)}&tags=%C3%A9%20t&size=1`);
  t.deepEqual((await f.admin(first.body.next)).body.data.map((c: { username: string }) => c.username).length, 1);
  // tags compare as bytes: an escape that is no UTF-8 finds nothing
  t.deepEqual((await f.admin('/consumers?tags=%C3')).body, { data: [], next: null });
  await f.admin('/services', { method: 'POST', json: { name: 'pager', url: 'http://example.test' } });
  for (const path of ['/p1', '/p2']) await f.admin('/services/pager/routes', { method: 'POST', json: { paths: [path], tags: ['x'] } });
  const nested = await f.admin('/services/pager/routes?size=1&tags=x');
  t.is(nested.body.next, `/services/pager/routes?offset=${encodeURIComponent(nested.body.offset)}`);
});

test('a nested list ignores tags, whose syntax is still checked (14-tags_spec.lua:121-130 #6779; postgres/init.lua:466-474 page_for_<foreign>)', async (t) => {
  const created = await f.admin('/consumers/tagged-1/plugins', {
    method: 'POST',
    json: { name: 'correlation-id', tags: ['corp_ a', 'consumer_ 1'] },
  });
  t.is(created.status, 201);
  const plugins = await f.admin('/consumers/tagged-1/plugins?tags=consumer_%202');
  t.is(plugins.status, 200);
  t.is(plugins.body.data.length, 1);
  t.deepEqual(plugins.body.data[0].tags, ['corp_ a', 'consumer_ 1']);
  await f.admin('/services', { method: 'POST', json: { name: 'tag-blind', url: 'http://example.test' } });
  await f.admin('/services/tag-blind/routes', { method: 'POST', json: { paths: ['/untagged'] } });
  t.is((await f.admin('/services/tag-blind/routes?tags=a')).body.data.length, 1);
  for (const [query, message] of [
    ['', 'invalid option (tags: cannot be null)'],
    ['a,b/c', 'invalid option (tags: invalid filter syntax)'],
    ['a,b,c,d,e,f', 'invalid option (tags: cannot query more than 5 tags)'],
  ] as const) {
    const refused = await f.admin(`/services/tag-blind/routes?tags=${query}`);
    t.is(refused.status, 400, query);
    t.is(refused.body.message, message, query);
  }
});

test('/tags/{tag}: the next link names the tag as the URL wrote it (kong/api/routes/tags.lua:18-19)', async (t) => {
  const page = await f.admin('/tags/corp_%20a?size=1');
  t.is(page.body.next, `/tags/corp_%20a?offset=${encodeURIComponent(page.body.offset)}`);
  const lower = await f.admin('/tags/corp%5f%20a?size=1');
  t.is(lower.body.next, `/tags/corp%5f%20a?offset=${encodeURIComponent(lower.body.offset)}`);
});
