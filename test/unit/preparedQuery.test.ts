import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../db/pool.js';
import type { SchedulingDB } from '../../db/social.js';
import { preparedQuery, typedQueries } from '../../db/sqlFragments.js';

const db = typedQueries<SchedulingDB>();
// The statements below must fail while compiling, before any round trip.
const unreachable: Queryable = { query: () => Promise.reject(new Error('sent to the database')) } as unknown as Queryable;

describe('preparedQuery', () => {
  it('refuses a parameter used as a value while the statement is built (its shape would freeze that value)', async () => {
    const serialised = preparedQuery((p: { error: object }) => db.updateTable('posts').set({ error: sql`${JSON.stringify(p.error)}` }));
    await expect(serialised(unreachable, { error: {} })).rejects.toThrow(/parameter error is used as a value/);
    const computed = preparedQuery((p: { ms: number }) => db.selectFrom('posts').select('id').where('scheduled_time', '<=', sql<Date>`now() + make_interval(secs => ${p.ms / 1000})`));
    await expect(computed(unreachable, { ms: 1 })).rejects.toThrow(/parameter ms is used as a value/);
  });

  it('sends the text compiled once, with each call’s values in their places', async () => {
    const sent: Array<{ text: string; values: unknown[] }> = [];
    const recorder = { query: async (c: { text: string; values: unknown[] }) => (sent.push(c), { rows: [] }) } as unknown as Queryable;
    const q = preparedQuery((p: { postId: string; n: number }) => db.selectFrom('post_schedules').select('id').where('n', '=', p.n).where('post_id', '=', p.postId).where('status', '=', 'scheduled'));
    await q(recorder, { postId: 'a', n: 1 });
    await q(recorder, { postId: 'b', n: 2 });
    expect(sent[0]!.text).toBe('select "id" from "post_schedules" where "n" = $1 and "post_id" = $2 and "status" = $3');
    expect(sent[1]!.text).toBe(sent[0]!.text);
    expect(sent.map((s) => s.values)).toEqual([[1, 'a', 'scheduled'], [2, 'b', 'scheduled']]);
  });
});
