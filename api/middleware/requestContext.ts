/**
 * One MikroORM `RequestContext` per request of a route that uses the ORM (mounted per route; not
 * for `orm: false`): `deps.orm.em` resolves to the request's own fork (identity map, unit of work,
 * the `workspace` filter's parameter set after authentication).
 */
import type { Middleware } from 'koa';
import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '../../db/orm.js';

export function requestContext(orm: MikroORM): Middleware {
  return (_ctx, next) => RequestContext.create(orm.em, next);
}
