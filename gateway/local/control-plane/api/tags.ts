import type Router from '@koa/router';
import type { EntityService } from '../db/entity-service.ts';
import { ENTITY_NAMES, type EntityName } from '../schema/entities/index.ts';
import { KongError } from '../schema/errors.ts';
import { encodeOffset, pageArguments, type Page } from './listing.ts';
import { unescapedParam } from './path-keys.ts';

/** A row of Kong's tags table: one per tag of a tagged entity. */
interface TagRow {
  entity_id: string;
  entity_name: EntityName;
  tag: string;
}

/**
 * `/tags` and `/tags/{tag}` (kong/api/routes/tags.lua, kong/db/strategies/postgres/tags.lua): every
 * tag of every entity, ordered by entity id and the tag's place in the entity's list, paged by
 * `[entity_id, ordinality]`; or the entities carrying one tag, paged by `[entity_id]`.
 */
export function mountTagRoutes(router: Router, service: EntityService): void {
  const rows = (): Array<TagRow & { ordinality: number }> =>
    ENTITY_NAMES.flatMap((name) =>
      service
        .list(name)
        .flatMap((entity) => (entity.tags ?? []).map((tag, i) => ({ entity_id: entity.id, entity_name: name, tag, ordinality: i + 1 }))),
    ).sort((a, b) => (a.entity_id < b.entity_id ? -1 : a.entity_id > b.entity_id ? 1 : a.ordinality - b.ordinality));

  router.get('/tags', (ctx) => {
    const { size, after } = pageArguments(ctx.query);
    const [afterId, afterOrdinality] = [String(after?.[0] ?? ''), Number(after?.[1] ?? 0)];
    const all = rows().filter(
      (row) => !after || row.entity_id > afterId || (row.entity_id === afterId && row.ordinality > afterOrdinality),
    );
    const slice = all.slice(0, size);
    const last = slice[slice.length - 1];
    const page: Page<TagRow> = { data: slice.map(({ ordinality: _o, ...row }) => row), next: null };
    if (last && all.length > size) {
      page.offset = encodeOffset([last.entity_id, last.ordinality]);
      page.next = `/tags?offset=${encodeURIComponent(page.offset)}`;
    }
    ctx.body = page;
  });

  router.get('/tags/:tags', (ctx) => {
    // kong/api/endpoints.lua:237-240: the tag unescaped; kong/db/dao/tags.lua page_by_tag validates
    // it first, refused as invalid_unique (code 10)
    const { text: tag, invalidAt: at } = unescapedParam(ctx, 'tags');
    if (at !== undefined) {
      throw new KongError({ code: 10, name: 'invalid unique tag', message: `invalid utf-8 character sequence detected at position ${at}` }, 400);
    }
    const { size, after } = pageArguments(ctx.query);
    const afterId = after && String(after[0]);
    const all = rows().filter((row) => row.tag === tag && (afterId === undefined || row.entity_id > afterId));
    const slice = all.slice(0, size);
    const last = slice[slice.length - 1];
    const page: Page<TagRow> = { data: slice.map(({ ordinality: _o, ...row }) => row), next: null };
    if (last && all.length > size) {
      page.offset = encodeOffset([last.entity_id]);
      // the tag as the URL wrote it (kong/api/routes/tags.lua:18-19: self.params.tags, not unescaped)
      page.next = `/tags/${ctx.path.slice('/tags/'.length)}?offset=${encodeURIComponent(page.offset)}`;
    }
    ctx.body = page;
  });
}
