/**
 * GET /contacts/{id} batches the reads of one event-loop turn (db/contactRead.ts
 * `createContactReader`): requests that arrive together, of several workspaces, with foreign,
 * deleted, unknown, upper-case and repeated ids, get exactly the answers they get one at a time,
 * and the reads of a turn cost one statement per workspace.
 */
import { inWorkspaceScope } from '../../db/tenancy.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { createContactReader, fetchContact } from '../../db/contactRead.js';
import type { Queryable } from '../../db/pool.js';

let app: TestApp;
const ws: { key: string; workspaceId: string; ids: string[] }[] = [];
let deletedId: string;

async function upsertContacts(key: string, n: number, tag: string): Promise<string[]> {
  const source = await app.http('POST', '/sources', { apiKey: key, body: { sourceType: 'pronetInbound', sourceIdentifier: `https://www.pronet.com/in/reader-${tag}`, sourceMeta: {} } });
  expect(source.status, JSON.stringify(source.body)).toBe(200);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await app.http('POST', `/contacts/${source.body.data.id}`, {
      apiKey: key,
      body: { 'contact.firstName': `Reader${i}`, 'contact.lastName': tag, 'contact.pronet': `https://www.pronet.com/in/reader-${tag}-${i}`, 'company.companyName': `Co ${tag}` },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(res.body.data.id);
  }
  return ids;
}

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
  for (const tag of ['a', 'b']) {
    const w = await app.createWorkspace();
    ws.push({ key: w.apiKey, workspaceId: w.workspaceId, ids: await upsertContacts(w.apiKey, 4, tag) });
  }
  deletedId = ws[0]!.ids.pop()!;
  expect((await app.http('DELETE', `/contacts/${deletedId}`, { apiKey: ws[0]!.key })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await app?.close();
});

describe('GET /contacts/{id} read in batches', () => {
  it('answers requests sent together exactly as it answers them one at a time', async () => {
    const [a, b] = ws as [(typeof ws)[0], (typeof ws)[0]];
    const requests: { key: string; id: string }[] = [
      ...a.ids.map((id) => ({ key: a.key, id })),
      ...b.ids.map((id) => ({ key: b.key, id })),
      { key: a.key, id: b.ids[0]! }, // another workspace's contact: 404
      { key: b.key, id: a.ids[0]! },
      { key: a.key, id: deletedId }, // deleted: 404
      { key: a.key, id: '01a216d2-0000-7000-8000-000000000000' }, // unknown: 404
      { key: a.key, id: 'not-a-uuid' },
      { key: a.key, id: a.ids[1]!.toUpperCase() }, // the same contact
      { key: a.key, id: a.ids[1]! }, // twice in one turn
      { key: b.key, id: b.ids[2]! },
    ];
    const get = (r: { key: string; id: string }) => app.http('GET', `/contacts/${r.id}`, { apiKey: r.key });
    const oneAtATime: Awaited<ReturnType<typeof get>>[] = [];
    for (const r of requests) oneAtATime.push(await get(r));
    expect(oneAtATime.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 404, 404, 404, 404, 404, 200, 200, 200]);

    for (let round = 0; round < 3; round++) {
      const together = await Promise.all(requests.map(get));
      together.forEach((res, i) => {
        expect(res.status, `${requests[i]!.id}`).toBe(oneAtATime[i]!.status);
        if (res.status === 200) expect(res.body).toEqual(oneAtATime[i]!.body);
        else expect(res.body.error.code).toBe(oneAtATime[i]!.body.error.code);
      });
    }
  });

  it('reads of one turn cost one statement per workspace; a turn with one read uses the single-id statement', async () => {
    const statements: string[] = [];
    const counting: Queryable = {
      query: ((config: { name?: string }, values?: unknown[]) => {
        statements.push(config.name ?? 'unnamed');
        return app.deps.pool.query(config as never, values as never);
      }) as Queryable['query'],
    };
    const read = createContactReader(counting);
    const [a, b] = ws as [(typeof ws)[0], (typeof ws)[0]];
    const reads = [...a.ids.map((id) => [a.workspaceId, id]), ...b.ids.map((id) => [b.workspaceId, id]), [a.workspaceId, b.ids[0]!], [a.workspaceId, deletedId], [b.workspaceId, 'not-a-uuid']] as [string, string][];
    const batched = await Promise.all(reads.map(([w, id]) => read(w, id)));
    expect(statements.sort()).toEqual(['fetch-contacts', 'fetch-contacts']);
    const single = await Promise.all(reads.map(([w, id]) => inWorkspaceScope(w, () => fetchContact(app.deps.pool, w, id))));
    expect(batched).toEqual(single);
    expect(batched.filter(Boolean)).toHaveLength(a.ids.length + b.ids.length);

    statements.length = 0;
    expect(await read(a.workspaceId, a.ids[0]!)).toEqual(single[0]);
    expect(statements).toEqual(['fetch-contact']);
  });
});
