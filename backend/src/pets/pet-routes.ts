import type Router from '@koa/router';
import { ApiError, ErrorCode } from '../http/errors.ts';
import { jsonBody, requireJsonBody } from '../http/json-body.ts';
import { pageRenderer, sendPage, type RenderedPage } from '../http/pagination.ts';
import { IdParam } from '../http/params.ts';
import { publicPath, publicRequestPath } from '../http/public-path.ts';
import { requestDb } from '../http/request-db.ts';
import { parseWith } from '../http/validation.ts';
import type { Middleware } from 'koa';
import { NewPetStruct, PetStatusStruct } from './pet.ts';
import type { PageCache } from './page-cache.ts';
import type { PetRepository } from './pet-repository.ts';

/**
 * Registers the pet operations on `router`. With `pages`, rendered list pages are kept until the
 * repository reports a change. `writeGuards` run before a write's handler (Idempotency-Key).
 */
export function petRoutes(router: Router, pets: PetRepository, pages?: PageCache<RenderedPage>, writeGuards: Middleware[] = []): void {
  if (pages) pets.onChange(() => pages.invalidate());
  const renderPage = pageRenderer(PetStatusStruct, (query) => pets.list(query));

  router.get('/pets', async (ctx) => {
    // A hit skips validation too: only queries that rendered successfully are ever stored.
    sendPage(ctx, pages ? await pages.getOrLoad(`${publicRequestPath(ctx)}?${ctx.querystring}`, () => renderPage(ctx)) : await renderPage(ctx));
  });

  router.post('/pets', requireJsonBody, ...writeGuards, async (ctx) => {
    const input = parseWith(NewPetStruct, jsonBody(ctx), 'pet');
    const pet = await pets.create({ ...input, status: input.status ?? 'available' }, requestDb(ctx));
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
