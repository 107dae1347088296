/**
 * The API processes running now (api/replicas.ts): each announces itself every heartbeat and
 * counts those seen within the time to live. A global table (no workspace).
 */
import { sql } from 'kysely';
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { ApiReplica } from './platform.js';
import type { Queryable } from './pool.js';
import { preparedQuery, typedQueries } from './sqlFragments.js';

const q = typedQueries<InferKyselyDB<typeof ApiReplica>>();

const announce = preparedQuery((p: { id: string }) =>
  q
    .insertInto('api_replicas')
    .values({ id: p.id })
    .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: sql`now()` })),
);
// This statement does not see the row the announce above just wrote (one snapshot per statement
// would, but they are two): the others are counted, and the caller adds itself.
const countOthers = preparedQuery((p: { id: string; ttlSeconds: number }) =>
  q
    .selectFrom('api_replicas')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('id', '<>', p.id)
    .where('seen_at', '>', sql<Date>`now() - make_interval(secs => ${p.ttlSeconds})`),
);
const remove = preparedQuery((p: { id: string }) => q.deleteFrom('api_replicas').where('id', '=', p.id));
const removeStale = preparedQuery((p: { olderThanSeconds: number }) => q.deleteFrom('api_replicas').where('seen_at', '<', sql<Date>`now() - make_interval(secs => ${p.olderThanSeconds})`));

/** Announces replica `id` and answers how many replicas run now (itself included). */
export async function heartbeat(db: Queryable, id: string, ttlSeconds: number): Promise<number> {
  await announce(db, { id });
  const [row] = await countOthers(db, { id, ttlSeconds });
  return Number(row?.n ?? 0) + 1;
}

/** A clean shutdown: the others stop counting this replica at their next heartbeat. */
export async function leave(db: Queryable, id: string): Promise<void> {
  await remove(db, { id });
}

/** Rows of replicas gone for long (crashed without leaving); any replica may sweep them. */
export async function removeStaleReplicas(db: Queryable, olderThanSeconds: number): Promise<void> {
  await removeStale(db, { olderThanSeconds });
}
