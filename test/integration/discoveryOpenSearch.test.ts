/**
 * Parity oracle of the two discovery engines (docs/DISCOVERY.md "Engines"): on one generated
 * dataset, imported once and indexed into OpenSearch (bulk API, alias), the PostgreSQL engine and
 * the OpenSearch engine answer the bench's query mix and a few hundred random condition trees
 * (fixed seed) with the same items in the same order, the same totals, the same tokens and the
 * same credits; both agree with the in-test oracle. Opt-outs and re-indexing reach the index.
 *
 * OpenSearch is the embedded node of scripts/stack.ts (started here when not running, stopped
 * after if started here). The test is skipped only when the bootstrap could not fetch it (its
 * reason is in the test's name); a missing install otherwise fails.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestApp, type TestApp } from '../harness.js';
import { SearchUnavailableError } from '../../domain/errors.js';
import { startApiServer, type ApiServer } from '../../api/server.js';
import { applyDatasetOptOuts, datasetOptOutKey } from '../../db/datasetOptOuts.js';
import { aliasOf, likeToWildcard, openSearchClient, reindexDiscovery, searchIds, syncDiscoveryDocuments } from '../../db/discoveryOpenSearch.js';
import { searchV2, type V2SearchOptions } from '../../db/discoverySearch.js';
import { QUERIES } from '../../bench/discoveryQueries.js';
import { OPENSEARCH_HOME, OPENSEARCH_UNAVAILABLE, stackLayout, startOpenSearch, stopOpenSearch } from '../../scripts/stack.js';
import { FIELDS, TreeRng, loadOracleDataset, matchCompany, matchPerson, randomTree, type Node, type OCompany, type OPerson } from './discoveryOracle.js';

const SEED = 20261129;
const PEOPLE = 2000;
const COMPANIES = 200;
const RANDOM_TREES = 300;
const RANDOM_VERIFIED = 60;

const installed = existsSync(join(OPENSEARCH_HOME, 'bin', 'opensearch'));
const unavailable = !installed && existsSync(OPENSEARCH_UNAVAILABLE) ? readFileSync(OPENSEARCH_UNAVAILABLE, 'utf8').trim() : null;

let app: TestApp;
let osApi: ApiServer;
let startedHere = false;
let pgOpts: V2SearchOptions;
let osOpts: V2SearchOptions;
let keys: { pg: string; os: string };
let people: OPerson[];
let companies: OCompany[];
const prefix = `parity-${process.pid}-${Date.now()}`;
const openSearchUrl = `http://127.0.0.1:${stackLayout(process.env).ports.opensearch}`;

beforeAll(async () => {
  if (!installed) throw new Error(`OpenSearch is not installed at ${OPENSEARCH_HOME}: run node scripts/bootstrap.mjs --with-opensearch`);
  const os = await startOpenSearch(stackLayout(process.env));
  startedHere = os.startedNow;
  app = await startTestApp({ workerMode: 'none' });
  ({ people, companies } = await loadOracleDataset(app.pool, { people: PEOPLE, companies: COMPANIES, seed: SEED }));
  const discovery = { ...app.config.discovery, opensearchUrl: openSearchUrl, indexPrefix: prefix };
  const report = await reindexDiscovery(app.pool, discovery);
  expect(report.index.people.documents).toBe(PEOPLE);
  expect(report.index.companies.documents).toBe(COMPANIES);
  pgOpts = { ...discovery, engine: 'postgres', exactCountLimit: 100_000 };
  osOpts = { ...discovery, engine: 'opensearch', exactCountLimit: 100_000 };
  // the same API over the same database, on the OpenSearch engine
  osApi = await startApiServer({ ...app.config, discovery: { ...discovery, engine: 'opensearch', exactCountLimit: 100_000 } }, { log: pino({ level: 'silent' }), port: 0 });
  keys = { pg: (await app.createWorkspace({ credits: 1_000_000 })).apiKey, os: (await app.createWorkspace({ credits: 1_000_000 })).apiKey };
}, 180_000);

afterAll(async () => {
  await osApi?.close();
  if (installed) await openSearchClient(openSearchUrl).indices.delete({ index: `${prefix}-*` }).catch(() => {});
  await app?.close();
  if (startedHere) await stopOpenSearch(process.env);
});

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const pathOf = (entity: 'contacts' | 'companies') => `/discovery-search/find-${entity}-v2`;

/** POST on the PostgreSQL API (the test app's) or the OpenSearch one, with that engine's workspace. */
async function post(engine: 'pg' | 'os', path: string, body: unknown) {
  if (engine === 'pg') return app.http('POST', path, { apiKey: keys.pg, body });
  const res = await fetch(osApi.url + path, { method: 'POST', headers: { 'x-api-key': keys.os, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}
const balance = async (engine: 'pg' | 'os') => {
  const k = keys[engine];
  const res = engine === 'pg' ? await app.http('GET', '/credits/balance', { apiKey: k }) : await fetch(osApi.url + '/credits/balance', { headers: { 'x-api-key': k } }).then(async (r) => ({ body: (await r.json()) as any }));
  return res.body.data.balance as number;
};

/** Every page of a search (forward by nextToken, then one page back) on one engine, with the credits it cost. */
async function walk(engine: 'pg' | 'os', entity: 'contacts' | 'companies', body: Record<string, unknown>, limit: number) {
  const before = await balance(engine);
  const pages: unknown[] = [];
  let token: string | undefined;
  let last: any;
  for (let guard = 0; guard < 200; guard++) {
    const res = await post(engine, pathOf(entity), { ...body, limit, ...(token ? { paginationToken: token } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages.push(res.body);
    last = res.body;
    token = res.body.meta.nextToken || undefined;
    if (!token) break;
  }
  if (last.meta.previousToken) pages.push((await post(engine, pathOf(entity), { ...body, limit, paginationToken: last.meta.previousToken })).body);
  return { pages, credits: before - (await balance(engine)) };
}

/** A verified search's inputFieldMapping of 1–3 random inputs, valued from a sampled person and company (so they match something). */
function randomVerifiedInput(r: TreeRng, entity: 'contacts' | 'companies'): { sourceFieldName: string; userInput: unknown }[] {
  const p = r.pick(people.filter((x) => x.company));
  const c = r.next() < 0.5 ? p.company! : r.pick(companies);
  const word = (s: string) => r.pick(s.split(/\s+/).filter((w) => w.length >= 3).concat(s)).slice(0, r.int(3, 6));
  const inputs: Record<string, () => unknown> = {
    companyIndustryInclude: () => [c.rec.industry, r.pick(companies).rec.industry],
    companyHeadcountRange: () => [`${Math.max(0, c.rec.employee_count - r.int(0, 50))}-${c.rec.employee_count + r.int(0, 500)}`, ...(r.next() < 0.3 ? ['5000+'] : [])],
    companyRevenue: () => ({ min: String(r.int(0, 5) * 1_000_000), ...(r.next() < 0.5 ? { max: `${r.int(5, 500)}M` } : {}), include_unknown_revenue: r.next() < 0.5 }),
    companyNameInclude: () => [r.next() < 0.5 ? c.rec.company_name.toUpperCase() : c.rec.company_name, r.pick(companies).rec.company_name],
    companyWebsiteInclude: () => [c.rec.company_website],
    companyCountryInclude: () => [c.rec.hq_country, r.pick(companies).rec.hq_country],
    companyTechnologiesInclude: () => [r.pick(c.rec.technologies)],
    numberOfCompaniesToPull: () => r.int(1, 40),
    ...(entity === 'contacts'
      ? {
          numberOfContactsToPull: () => r.int(1, 60),
          jobTitleInclude: () => [word(p.rec.member_job_title), ...(r.next() < 0.3 ? [word(r.pick(people).rec.member_job_title)] : [])],
          seniorityInclude: () => [p.rec.member_seniority, ...(r.next() < 0.5 ? ['Director', 'Manager'] : [])],
          countryInclude: () => [p.rec.member_location_country],
        }
      : {}),
  };
  const names = Object.keys(inputs);
  const chosen = new Set<string>();
  const n = r.int(1, 3);
  while (chosen.size < n) chosen.add(r.pick(names));
  return [...chosen].map((name) => ({ sourceFieldName: name, userInput: inputs[name]!() }));
}

describe.skipIf(unavailable !== null)(`OpenSearch engine parity${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  it('LIKE patterns become wildcards with the same escapes', () => {
    expect(likeToWildcard('%vp of sales%')).toBe('*vp of sales*');
    expect(likeToWildcard('a_b\\%c\\_d*e?f\\\\')).toBe('a?b%c_d\\*e\\?f\\\\');
  });

  it('the bench query mix: same pages (items, order, totals, tokens) and the same credits over HTTP', async () => {
    let nonEmpty = 0;
    for (const q of QUERIES) {
      const pg = await walk('pg', q.entity, q.body, 7);
      const os = await walk('os', q.entity, q.body, 7);
      expect(os.pages, q.name).toEqual(pg.pages);
      expect(os.credits, q.name).toBe(pg.credits);
      const total = (pg.pages[0] as any).meta.totalRecords as number;
      const root = { operator: 'AND', conditions: [...((q.body.conditions as Node[]) ?? []), ...(q.body.groupedCondition ? [q.body.groupedCondition as Node] : [])] } as Node;
      const expected = q.entity === 'contacts' ? people.filter((p) => matchPerson(root, p)).length : companies.filter((c) => matchCompany(root, c)).length;
      expect(total, q.name).toBe(expected);
      if (total) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(QUERIES.length / 3);
  }, 120_000);

  it('a search that cannot see every shard is refused (503 search_unavailable), never answered from the shards that did; a dead node in OPENSEARCH_URL is passed over', async () => {
    const client = openSearchClient(openSearchUrl);
    const partial = `${prefix}-partial`;
    // two primaries, at most one per node: on this single node the second stays unassigned (a lost shard)
    const index = `${aliasOf(partial, 'contact')}-1`;
    await client.indices.create({
      index,
      wait_for_active_shards: 0, // one never will
      body: { settings: { number_of_shards: 2, number_of_replicas: 0, 'index.routing.allocation.total_shards_per_node': 1 }, aliases: { [aliasOf(partial, 'contact')]: {} } },
    });
    try {
      const states = async () => ((await client.cat.shards({ index, format: 'json' })).body as { state: string }[]).map((x) => x.state).sort();
      for (let i = 0; i < 100 && (await states()).join() !== 'STARTED,UNASSIGNED'; i++) await new Promise((r) => setTimeout(r, 300));
      expect(await states()).toEqual(['STARTED', 'UNASSIGNED']);
      const search = searchIds({ opensearchUrl: openSearchUrl, indexPrefix: partial }, 'contact', {}, { take: 10, dir: 'asc' });
      await expect(search).rejects.toBeInstanceOf(SearchUnavailableError);
    } finally {
      await client.indices.delete({ index });
    }
    // the first URL a closed port: the client sends the search to the next node
    const broad = { conditions: [{ field: 'dsContact.member_seniority', operator: 'IN', value: ['CXO', 'VP'] }] };
    const page = { take: 25, dir: 'asc' as const };
    const expected = await searchIds({ opensearchUrl: openSearchUrl, indexPrefix: prefix }, 'contact', broad, page);
    expect(expected.total).toBeGreaterThan(25);
    expect(await searchIds({ opensearchUrl: `http://127.0.0.1:${await freePort()},${openSearchUrl}`, indexPrefix: prefix }, 'contact', broad, page)).toEqual(expected);
  }, 60_000);

  it(`${RANDOM_TREES} random condition trees (fixed seed): same first and second pages and totals, as the oracle says`, async () => {
    const r = new TreeRng(SEED);
    const sample = () => r.pick(people);
    let nonEmpty = 0;
    for (let i = 0; i < RANDOM_TREES; i++) {
      const entity = i % 3 === 2 ? 'company' : 'contact';
      const tree = randomTree(r, FIELDS, sample);
      const body = { groupedCondition: 'conditions' in tree ? tree : { operator: 'AND', conditions: [tree] }, fields: entity === 'contact' ? ['dsContact.member_full_name', 'dsCompany.company_name'] : ['dsCompany.company_name'], limit: 10 };
      // the search's root is AND(groupedCondition): for companies a person-only group there is met by one person
      const root = { operator: 'AND', conditions: [body.groupedCondition as Node] };
      const expected = (entity === 'contact' ? people.filter((p) => matchPerson(root, p)) : companies.filter((c) => matchCompany(root, c))).sort(byId).map((x) => x.id);
      const [pg, os] = await Promise.all([searchV2(app.pool, 'parity', entity, body, pgOpts), searchV2(app.pool, 'parity', entity, body, osOpts)]);
      expect(os, JSON.stringify(body)).toEqual(pg);
      expect(os.meta.totalRecords, JSON.stringify(body)).toBe(expected.length);
      expect(os.data.map((d) => d.id), JSON.stringify(body)).toEqual(expected.slice(0, 10));
      if (os.meta.nextToken) {
        const next = { ...body, paginationToken: os.meta.nextToken };
        const [pg2, os2] = await Promise.all([searchV2(app.pool, 'parity', entity, next, pgOpts), searchV2(app.pool, 'parity', entity, next, osOpts)]);
        expect(os2, JSON.stringify(body)).toEqual(pg2);
        expect(os2.data.map((d) => d.id)).toEqual(expected.slice(10, 20));
      }
      if (expected.length) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(RANDOM_TREES / 4);
  }, 120_000);

  it(`${RANDOM_VERIFIED} random verified searches (fixed seed): same ranked pages, totals and credits over HTTP`, async () => {
    const r = new TreeRng(SEED + 1);
    let nonEmpty = 0;
    let multiPage = 0;
    for (let i = 0; i < RANDOM_VERIFIED; i++) {
      const entity = i % 2 ? 'contacts' : 'companies';
      const mapping = randomVerifiedInput(r, entity);
      const path = `/discovery-search/find-verified-${entity}`;
      const limit = r.pick([3, 10, 25]);
      const before = { pg: await balance('pg'), os: await balance('os') };
      const pages = { pg: [] as any[], os: [] as any[] };
      // pages 1-3 and a deep one past the end
      for (const page of [1, 2, 3, 40]) {
        for (const engine of ['pg', 'os'] as const) {
          const res = await post(engine, path, { inputFieldMapping: mapping, page, limit });
          expect(res.status, `${engine} ${JSON.stringify(mapping)} ${JSON.stringify(res.body)}`).toBe(200);
          pages[engine].push(res.body);
        }
      }
      expect(pages.os, JSON.stringify(mapping)).toEqual(pages.pg);
      expect(before.os - (await balance('os')), JSON.stringify(mapping)).toBe(before.pg - (await balance('pg')));
      if (pages.pg[0].data.length) nonEmpty++;
      if (pages.pg[1].data.length) multiPage++;
    }
    expect(nonEmpty).toBeGreaterThan(RANDOM_VERIFIED / 3);
    expect(multiPage).toBeGreaterThan(RANDOM_VERIFIED / 10);
  }, 120_000);

  it('an opt-out leaves the index (the person and their company\'s nested person); a re-index swaps the alias onto a new index', async () => {
    const person = people.find((p) => p.company && p.rec.member_seniority === 'CXO')!;
    const byUrl = { conditions: [{ field: 'dsContact.member_pronet_url', operator: '==', value: person.rec.member_pronet_url }] };
    const sameCompany = { conditions: [{ field: 'dsCompany.company_pronet_url', operator: '==', value: person.company!.rec.company_pronet_url }, { field: 'dsContact.member_pronet_url', operator: '==', value: person.rec.member_pronet_url }] };
    expect((await searchV2(app.pool, 'parity', 'contact', byUrl, osOpts)).meta.totalRecords).toBe(1);
    expect((await searchV2(app.pool, 'parity', 'company', sameCompany, osOpts)).meta.totalRecords).toBe(1);
    await applyDatasetOptOuts(app.pool, datasetOptOutKey('parity'), { emails: [], profileUrls: [], personIds: [person.id] }, { afterRemoval: (removed) => syncDiscoveryDocuments(app.pool, osOpts as never, removed) });
    for (const opts of [pgOpts, osOpts]) {
      expect((await searchV2(app.pool, 'parity', 'contact', byUrl, opts)).meta.totalRecords).toBe(0);
      expect((await searchV2(app.pool, 'parity', 'company', sameCompany, opts)).meta.totalRecords).toBe(0);
    }
    const client = openSearchClient(osOpts.opensearchUrl!);
    const before = Object.keys((await client.indices.getAlias({ name: aliasOf(prefix, 'contact') })).body);
    const report = await reindexDiscovery(app.pool, osOpts as never);
    expect(report.index.people.documents).toBe(PEOPLE - 1);
    const after = Object.keys((await client.indices.getAlias({ name: aliasOf(prefix, 'contact') })).body);
    expect(after).toEqual([report.index.people.name]);
    expect(after).not.toEqual(before);
    expect((await client.indices.exists({ index: before[0]! })).body).toBe(false);
    // the new people index is stored in id order (PEOPLE_SETTINGS); the companies index cannot be (nested people)
    const sortOf = async (index: string) => (await client.indices.getSettings({ index })).body[index]!.settings?.index?.sort?.field;
    expect([await sortOf(report.index.people.name)].flat()).toEqual(['id']);
    expect(await sortOf(report.index.companies.name)).toBeUndefined();
    // the swapped-in indexes are committed (flushed): every segment is on disk, none of their
    // documents rests on the translog the load wrote asynchronously, so a node lost after the swap
    // comes back with all of them
    for (const { name } of Object.values(report.index)) {
      const shards = (await client.indices.segments({ index: name })).body.indices[name]!.shards;
      const segments = Object.values(shards).flat().flatMap((copy) => Object.values((copy as { segments: Record<string, { committed: boolean }> }).segments));
      expect(segments.length, name).toBeGreaterThan(0);
      expect(segments.filter((x) => !x.committed), name).toEqual([]);
    }
    const broad = { conditions: [{ field: 'dsContact.member_seniority', operator: 'IN', value: ['CXO', 'VP'] }], limit: 50 };
    expect(await searchV2(app.pool, 'parity', 'contact', broad, osOpts)).toEqual(await searchV2(app.pool, 'parity', 'contact', broad, pgOpts));
  }, 60_000);
});
