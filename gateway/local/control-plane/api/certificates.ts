import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import type { EntityService } from '../db/entity-service.ts';
import { isUuid } from '../schema/typedefs.ts';
import { isPlainObject } from '../schema/validate.ts';
import { unescapeUri } from './path-keys.ts';

// kong/api/routes/certificates.lua (3.9.3): a certificate is also named by one of its SNIs.

const CERTIFICATE_PATH = /^\/certificates\/([^/]+)(\/snis(?:\/[^/]+)?)?\/?$/;

/** The SNI name a PUT /certificates/{name} was addressed by, for prepare_args. */
const SNI_NAME = 'certificateSniName';

/**
 * prepare_params: `/certificates/{name}` (and its `/snis` paths) with a name that is not a UUID is
 * the certificate of the SNI of that name. None: 404 "SNI not found", except a PUT of the
 * certificate itself, which creates one under a new id with that SNI.
 */
export function certificatesBySni(service: EntityService): Koa.Middleware {
  return async (ctx, next) => {
    const match = CERTIFICATE_PATH.exec(ctx.path);
    // certificates.lua:15: unescape_uri(self.params.certificates)
    const name = match && unescapeUri(match[1]!).toString('utf8');
    if (!match || name === null || isUuid(name)) {
      await next();
      return;
    }
    const sni = service.select('snis', name);
    let id = sni?.certificate.id;
    if (id === undefined) {
      if (ctx.method !== 'PUT') {
        ctx.status = 404;
        ctx.body = { message: 'SNI not found' };
        return;
      }
      id = randomUUID();
    }
    if (match[2] === undefined) ctx.state[SNI_NAME] = name;
    ctx.path = `/certificates/${id}${match[2] ?? ''}`;
    await next();
  };
}

/**
 * prepare_args for PUT and PATCH /certificates/{key}: `snis` as a string is a list of one; a PUT
 * addressed by an SNI name keeps that name among them; a PUT without `snis` removes them all.
 */
export function mountCertificateRoutes(router: Router): void {
  const prepare = async (ctx: Koa.Context, next: Koa.Next) => {
    const body: unknown = ctx.request.body;
    const input: Record<string, unknown> = isPlainObject(body) ? body : {};
    const name = ctx.state[SNI_NAME] as string | undefined;
    const put = ctx.method === 'PUT';
    let snis = input.snis;
    if (Array.isArray(snis)) {
      if (name !== undefined && put && !snis.includes(name)) snis = [...(snis as unknown[]), name];
    } else if (typeof snis === 'string') {
      snis = name !== undefined && put && name !== snis ? [snis, name] : [snis];
    }
    if ((snis === undefined || snis === null) && put) snis = null;
    if (snis !== undefined) (ctx.request as { body: unknown }).body = { ...input, snis };
    await next();
  };
  router.put('/certificates/:certificates', prepare);
  router.patch('/certificates/:certificates', prepare);
}
