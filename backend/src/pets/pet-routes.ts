import type Router from '@koa/router';
import { object, optional, string } from 'superstruct';
import { ApiError, ErrorCode } from '../http/errors.ts';
import { jsonBody, requireJsonBody } from '../http/json-body.ts';
import { decodeCursor, nextLink, publicPath, publicPrefix, sendPage, toPage, type RenderedPage } from '../http/pagination.ts';
import { IdParam, PAGE_LIMIT, PageLimitParam } from '../http/params.ts';
import { parseWith } from '../http/validation.ts';
import { NewPetStruct, PetStatusStruct } from './pet.ts';
import type { PageCache } from './page-cache.ts';
import type { PetRepository } from './pet-repository.ts';

const ListPetsQuery = object({
  limit: optional(PageLimitParam),
  status: optional(PetStatusStruct),
  cursor: optional(string()),
});

/** Registers the pet operations on `router`. */
export function petRoutes(router: Router, pets: PetRepository, pages?: PageCache<RenderedPage>): void {
  router.get('/pets', async (ctx) => {
    const render = async (): Promise<RenderedPage> => {
      const query = parseWith(ListPetsQuery, { ...ctx.query }, 'query');
      const limit = query.limit ?? PAGE_LIMIT.default;
      const afterId = decodeCursor(query.cursor);
      const page = toPage(await pets.list({ status: query.status, afterId, take: limit + 1 }), limit);
      return { json: JSON.stringify(page.items), link: nextLink(ctx, page, { limit, status: query.status }) };
    };
    // A hit skips validation too: only queries that rendered successfully are ever stored.
    sendPage(ctx, pages ? await pages.getOrLoad(`${publicPrefix(ctx)}?${ctx.querystring}`, render) : await render());
  });

  router.post('/pets', requireJsonBody, async (ctx) => {
    const input = parseWith(NewPetStruct, jsonBody(ctx), 'pet');
    const pet = await pets.create({ ...input, status: input.status ?? 'available' });
    ctx.status = 201;
    ctx.set('Location', publicPath(ctx, `/pets/${pet.id}`));
    ctx.body = pet;
  });

  // Deprecated: the gateway adds Deprecation, Sunset and Link to every response of this route.
  router.get('/pets/:petId', async (ctx) => {
    const petId = parseWith(IdParam, ctx.params.petId, 'petId');
    const pet = await pets.find(petId);
    if (!pet) throw new ApiError(404, ErrorCode.petNotFound, `Pet ${petId} was not found.`);
    ctx.body = pet;
  });

}
