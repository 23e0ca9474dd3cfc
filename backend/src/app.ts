import { METHODS } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import type { Knex } from 'knex';
import type { RoutesAt } from './http/client-error.ts';
import { contractRoutes } from './http/contract-routes.ts';
import { errorMiddleware, type ErrorLogger } from './http/error-middleware.ts';
import type { RenderedPage } from './http/pagination.ts';
import { bindDb } from './http/request-db.ts';
import { idempotency } from './idempotency/idempotency-middleware.ts';
import { IdempotencyStore } from './idempotency/idempotency-store.ts';
import { InFlightKeys } from './idempotency/in-flight.ts';
import { OrderRepository } from './orders/order-repository.ts';
import { OrderService, type Clock } from './orders/order-service.ts';
import { areaHeaders, orderRoutes, stabilityHeaders } from './orders/order-routes.ts';
import { PageCache } from './pets/page-cache.ts';
import { PetRepository } from './pets/pet-repository.ts';
import { petRoutes } from './pets/pet-routes.ts';

export interface AppOptions {
  db: Knex;
  clock?: Clock;
  logError?: ErrorLogger;
  /** Keep GET /pets pages in memory between writes; defaults to on for SQLite, off otherwise. */
  cachePetPages?: boolean;
}

/** The backend's HTTP application, and what it serves at a path for requests Koa never sees. */
export interface Backend {
  app: Koa;
  routesAt: (path: string) => RoutesAt;
}

/** The backend's HTTP application: pets and store orders, paths without the public /v1 prefix. */
export function createApp({ db, clock, logError, cachePetPages }: AppOptions): Backend {
  const app = new Koa();
  // Pages are cached in memory only where this process is the single writer (SQLite).
  const pages = (cachePetPages ?? (db.client as Knex.Client).config.client === 'sqlite3') ? new PageCache<RenderedPage>((page) => page.json.length + (page.link?.length ?? 0)) : undefined;
  const pets = new PetRepository(db);
  const orders = new OrderService(new OrderRepository(db), pets, clock);
  const now = clock ?? (() => new Date());
  // Every POST accepts an Idempotency-Key (issue 16); the guard runs after the body is parsed.
  const writeGuards = [idempotency({ db, store: new IdempotencyStore(db), inFlight: new InFlightKeys(db), now: () => now().getTime() })];

  app.use(stabilityHeaders);
  app.use(errorMiddleware(logError));
  app.use(bindDb(db));
  // Every method Node's parser accepts counts as known, so allowedMethods answers a method a path
  // does not serve with 405 and Allow (its default list would make TRACE, PURGE… a 501). Paths
  // are case-sensitive, as the gateway's routes are (RFC 3986 6.2.2.1): /PETS/1 is no pet, and
  // could not be given the headers the gateway adds to the deprecated /pets/{petId}.
  const router = new Router({ methods: [...METHODS], sensitive: true });
  petRoutes(router, pets, pages, writeGuards);
  orderRoutes(router, orders, writeGuards);
  contractRoutes(router);
  app.use(router.routes());
  app.use(router.allowedMethods());
  const routesAt = (path: string): RoutesAt => ({
    methods: [...new Set(router.match(path, 'GET').path.flatMap((layer) => layer.methods))],
    headers: areaHeaders(path),
  });
  return { app, routesAt };
}
