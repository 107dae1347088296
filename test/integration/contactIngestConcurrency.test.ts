/**
 * Concurrent ingests of one workspace (db/contactIngest.ts) on the real database: chunks of one
 * import and separate imports write at the same time, optimistically; whatever interleaving
 * happens, identity resolution must come out as it would in some serial order: one contact per
 * person, every source row linked once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { ingestContacts, type IngestOptions } from '../../db/contactIngest.js';
import { inWorkspaceScope } from '../../db/tenancy.js';
import type { ContactInput } from '../../domain/contactMapping.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
});
afterAll(() => app?.close());

async function workspaceWithSources(n: number): Promise<{ workspaceId: string; sources: string[] }> {
  const ws = await app.createWorkspace();
  const sources: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await app.http('POST', '/sources', { apiKey: ws.apiKey, body: { sourceType: 'pronetInbound', sourceIdentifier: `https://www.pronet.com/in/owner-${i}`, sourceMeta: {} } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    sources.push(res.body.data.id);
  }
  return { workspaceId: ws.workspaceId, sources };
}

const email = (i: number) => `person${i}@example.com`;
const pronetKey = (i: number) => `pronet.com/in/person-${i}`;
const byEmail = (i: number): ContactInput => ({ rowKey: `e:${email(i)}`, origin: null, firstName: `First${i}`, emails: [email(i)], workEmail: email(i) });
const byProfile = (i: number): ContactInput => ({
  rowKey: `p:${pronetKey(i)}`,
  origin: null,
  lastName: `Last${i}`,
  pronet: `https://www.${pronetKey(i)}`,
  pronetKey: pronetKey(i),
  emails: [email(i)],
  workEmail: email(i),
  company: { companyName: `Company ${i % 7}`, companyWebsite: `company${i % 7}.example.com` },
});
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** As an activity runs it: on the worker's kind of pool (row-level security enforced), in the workspace's scope. */
const ingest = (rows: ContactInput[], opts: IngestOptions) => inWorkspaceScope(opts.workspaceId, () => ingestContacts(app.deps.pool, rows, opts));

describe('concurrent ingests', () => {
  it('two imports bringing the same people at the same time make one contact per person, linked to both', async () => {
    const { workspaceId, sources } = await workspaceWithSources(2);
    const N = 1500;
    // Neither batch can see the other's uncommitted contacts; the second to commit must notice
    // the first's emails and be redone, or every person would be stored twice.
    const [a, b] = await Promise.all([
      ingest(range(N).map(byEmail), { workspaceId, sourceId: sources[0]!, mode: 'automated' }),
      ingest(range(N).map(byProfile), { workspaceId, sourceId: sources[1]!, mode: 'automated' }),
    ]);
    expect(a.created + a.updated).toBe(N);
    expect(b.created + b.updated).toBe(N);
    expect(a.created + b.created).toBe(N);

    const stored = await app.pool.query<{ n: number; people: number; merged: number }>(
      `select count(*)::int as n, count(distinct emails[1])::int as people,
              count(*) filter (where first_name is not null and last_name is not null and pronet_key is not null)::int as merged
       from contacts where workspace_id = $1`,
      [workspaceId],
    );
    expect(stored.rows[0]).toEqual({ n: N, people: N, merged: N });
    const links = await app.pool.query<{ contacts: number; fully_linked: number }>(
      `select count(*)::int as contacts, count(*) filter (where n = 2)::int as fully_linked
       from (select contact_id, count(distinct source_id) as n from contact_sources where source_id = any($1::uuid[]) group by contact_id) x`,
      [sources],
    );
    expect(links.rows[0]).toEqual({ contacts: N, fully_linked: N });
    // Seven companies, each created once although both batches were in flight together.
    const companies = await app.pool.query<{ n: number }>(`select count(*)::int as n from companies where workspace_id = $1`, [workspaceId]);
    expect(companies.rows[0]!.n).toBe(7);
  });

  it('overlapping chunks of one source (same row keys, same profiles) never duplicate a contact or a link', async () => {
    const { workspaceId, sources } = await workspaceWithSources(1);
    const opts = { workspaceId, sourceId: sources[0]!, mode: 'automated' as const };
    // Four chunks of 800 rows over 2,000 people: each person is in two chunks, in flight together.
    const chunks = range(4).map((c) => range(800).map((i) => byProfile((c * 400 + i) % 2000)));
    const results = await Promise.all(chunks.map((rows) => ingest(rows, opts)));
    expect(results.reduce((n, r) => n + r.created, 0)).toBe(2000);
    expect(results.reduce((n, r) => n + r.created + r.updated, 0)).toBe(3200);

    const stored = await app.pool.query<{ n: number; keys: number }>(
      `select count(*)::int as n, count(distinct pronet_key)::int as keys from contacts where workspace_id = $1`,
      [workspaceId],
    );
    expect(stored.rows[0]).toEqual({ n: 2000, keys: 2000 });
    const links = await app.pool.query<{ n: number; contacts: number }>(
      `select count(*)::int as n, count(distinct contact_id)::int as contacts from contact_sources where source_id = $1`,
      [sources[0]],
    );
    expect(links.rows[0]).toEqual({ n: 2000, contacts: 2000 });
  });
});
