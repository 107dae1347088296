/**
 * Dataset tools: the importer (JSONL and CSV, line-numbered rejects while the rest loads,
 * re-import upserts, last duplicate wins, people linked to companies that arrive later) and the
 * generator's determinism; results checked through the search API.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { importDataset } from '../../db/datasetImport.js';
import { generateDataset } from '../../domain/datasetGenerator.js';
import { ROOT_DIR } from '../../domain/config.js';

let app: TestApp;
let key: string;
const dir = mkdtempSync(join(tmpdir(), 'ds-import-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const jsonl = (...rows: unknown[]) => rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n');

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
  key = (await app.createWorkspace({ credits: 1_000_000 })).apiKey;
});
afterAll(() => app?.close());

const person = (url: string, extra: Record<string, unknown> = {}) => ({
  member_pronet_url: url,
  member_full_name: 'Ada Lovelace',
  member_job_title: 'Chief Analyst',
  member_seniority: 'CXO',
  member_location_country: 'United Kingdom',
  member_skills: ['Math', 'Engines'],
  member_emails: [{ email: 'Ada@Example.com', status: 'valid' }],
  verified: true,
  ...extra,
});
const find = async (url: string) => {
  const res = await app.http('POST', '/discovery-search/find-contacts-v2', {
    apiKey: key,
    body: {
      conditions: [{ field: 'dsContact.member_pronet_url', operator: '==', value: url }],
      fields: ['dsContact.member_job_title', 'dsContact.member_emails', 'dsCompany.company_name', 'dsCompany.industry'],
    },
  });
  expect(res.status).toBe(200);
  return res.body;
};

/** Rows of ds_people_by_skill that differ from the skills of ds_people by country (0: in step). */
const skillDrift = async (pool: TestApp['pool']) =>
  (
    await pool.query(`select count(*)::int as n from (
      (select skill, country, person_id from ds_people_by_skill except select k, member_location_country, id from ds_people, unnest(member_skills) k where member_location_country is not null)
      union all
      (select k, member_location_country, id from ds_people, unnest(member_skills) k where member_location_country is not null except select skill, country, person_id from ds_people_by_skill)) d`)
  ).rows[0].n as number;

/** Rows of ds_companies_by_technology that differ from the technologies of ds_companies (0: in step). */
const technologyDrift = async (pool: TestApp['pool']) =>
  (
    await pool.query(`select count(*)::int as n from (
      (select technology, company_id from ds_companies_by_technology except select k, id from ds_companies, unnest(technologies) k where k is not null)
      union all
      (select k, id from ds_companies, unnest(technologies) k where k is not null except select technology, company_id from ds_companies_by_technology)) d`)
  ).rows[0].n as number;

describe('dataset import', () => {
  it('reports bad records with their line numbers and loads the rest; people link to companies that arrive later', async () => {
    const people = file(
      'people.jsonl',
      jsonl(
        person('https://www.pronet.com/in/ada-1', { company_pronet_url: 'https://pronet.com/company/engines-ltd/' }),
        '{not json',
        person('https://www.pronet.com/in/bad-years', { member_years_experience: -3 }),
        '',
        { member_full_name: 'No URL' },
        person('https://www.pronet.com/in/bad-email', { member_emails: [{ email: 'nope', status: 'valid' }] }),
        person('https://www.pronet.com/in/charles-2', { unknown_key: 1 }),
        person('https://www.pronet.com/in/grace-3', { member_job_title: 'Rear Admiral' }),
      ),
    );
    const report = await importDataset(app.pool, { people });
    expect(report.results[0]).toMatchObject({ kind: 'people', loaded: 2, rejected: 5 });
    expect(report.errors.map((e) => [e.line, e.message])).toEqual([
      [2, 'not valid JSON'],
      [3, expect.stringMatching(/member_years_experience must be a whole number/)],
      [5, 'member_pronet_url is required'],
      [6, 'member_emails[0].email is not an email address'],
      [7, 'unknown field unknown_key'],
    ]);
    // no company yet
    let got = await find('pronet.com/in/ada-1');
    expect(got.data[0]).toMatchObject({ title: 'Chief Analyst', emails: ['ada@example.com'], emailStatuses: [{ email: 'ada@example.com', status: 'valid' }], company: null });
    const companies = file(
      'companies.jsonl',
      jsonl({ company_pronet_url: 'https://www.pronet.com/company/Engines-Ltd', company_name: 'Engines Ltd', company_website: 'https://engines.co.uk', industry: 'Manufacturing', size_range: '11-50', technologies: ['Brass'], verified: true }),
    );
    expect((await importDataset(app.pool, { companies })).errorCount).toBe(0);
    got = await find('pronet.com/in/ada-1');
    expect(got.data[0].company).toMatchObject({ companyName: 'Engines Ltd', companyIndustry: 'Manufacturing' });
    expect(got.data[0].company.id).toMatch(/^[0-9a-f-]{36}$/);
    // the copied company attributes filter contact searches too
    const byIndustry = await app.http('POST', '/discovery-search/find-contacts-v2', {
      apiKey: key,
      body: { conditions: [{ field: 'dsCompany.industry', operator: '==', value: 'Manufacturing' }] },
    });
    expect(byIndustry.body.meta.totalRecords).toBe(1);
  });

  it('re-import upserts (same ids, new values), the last duplicate of a file wins, company changes reach people', async () => {
    const before = (await app.pool.query(`select id from ds_people where member_pronet_url = 'pronet.com/in/grace-3'`)).rows[0].id;
    const people = file(
      'people2.jsonl',
      jsonl(person('https://pronet.com/in/grace-3', { member_job_title: 'Commodore' }), person('https://pronet.com/in/grace-3', { member_job_title: 'Admiral' })),
    );
    const report = await importDataset(app.pool, { people });
    expect(report.errorCount).toBe(0);
    const rows = (await app.pool.query(`select id, member_job_title from ds_people where member_pronet_url = 'pronet.com/in/grace-3'`)).rows;
    expect(rows).toEqual([{ id: before, member_job_title: 'Admiral' }]);
    const companies = file('companies2.jsonl', jsonl({ company_pronet_url: 'pronet.com/company/engines-ltd', company_name: 'Engines Ltd', industry: 'Computer Games' }));
    await importDataset(app.pool, { companies });
    expect((await find('pronet.com/in/ada-1')).data[0].company.companyIndustry).toBe('Computer Games');
    const byIndustry = await app.http('POST', '/discovery-search/find-contacts-v2', {
      apiKey: key,
      body: { conditions: [{ field: 'dsCompany.industry', operator: '==', value: 'Computer Games' }] },
    });
    expect(byIndustry.body.meta.totalRecords).toBe(1);
  });

  it('reads CSV: quoted commas and newlines, ; lists, JSON cells, booleans; bad rows by line', async () => {
    const csv = file(
      'people.csv',
      [
        'member_pronet_url,member_full_name,member_job_title,member_skills,member_emails,verified,member_years_experience',
        'https://pronet.com/in/csv-1,"Lovelace, Ada","Head of\nEngines",Math;Engines,"[{""email"":""a@x.io"",""status"":""valid""}]",yes,12',
        'https://pronet.com/in/csv-2,Bob,,,,no,',
        'https://pronet.com/in/csv-3,Bad,Title,,,maybe,',
        'https://pronet.com/in/csv-4,Short',
      ].join('\n'),
    );
    const report = await importDataset(app.pool, { people: csv });
    expect(report.results[0]).toMatchObject({ loaded: 2, rejected: 2 });
    expect(report.errors.map((e) => [e.line, e.message])).toEqual([
      [5, 'verified must be a boolean'],
      [6, 'has 2 fields, the header has 7'],
    ]);
    const row = (await app.pool.query(`select member_full_name, member_job_title, member_skills, member_emails, verified, member_years_experience from ds_people where member_pronet_url = 'pronet.com/in/csv-1'`)).rows[0];
    expect(row).toEqual({
      member_full_name: 'Lovelace, Ada', member_job_title: 'Head of\nEngines', member_skills: ['Math', 'Engines'],
      member_emails: [{ email: 'a@x.io', status: 'valid' }], verified: true, member_years_experience: 12,
    });
    const bob = (await app.pool.query(`select member_job_title, member_skills, member_emails, verified from ds_people where member_pronet_url = 'pronet.com/in/csv-2'`)).rows[0];
    expect(bob).toEqual({ member_job_title: null, member_skills: [], member_emails: [], verified: false });
  });

  it('imports a generated dataset into empty tables (direct load) with every row linked', async () => {
    const t = await startTestApp({ workerMode: 'none' });
    try {
      const cs: string[] = [];
      const ps: string[] = [];
      for (const item of generateDataset({ people: 3000, companies: 200, seed: 5 })) (item.kind === 'company' ? cs : ps).push(JSON.stringify(item.record));
      ps.push(ps[10]!.replace(/"member_job_title":"[^"]*"/, '"member_job_title":"Duplicate Wins"'));
      const report = await importDataset(t.pool, { companies: file('gc.jsonl', cs.join('\n')), people: file('gp.jsonl', ps.join('\n')) });
      expect(report.errorCount).toBe(0);
      const counts = (await t.pool.query(`select (select count(*) from ds_people)::int as p, (select count(*) from ds_companies)::int as c,
        (select count(*) from ds_people where company_pronet_url is not null and company_id is null)::int as unlinked,
        (select count(*) from ds_people p join ds_companies c on c.id = p.company_id where p.company_industry is distinct from c.industry or p.company_hq_country is distinct from c.hq_country)::int as stale,
        (select count(*) from ds_people where member_job_title = 'Duplicate Wins')::int as dup`)).rows[0];
      expect(counts).toEqual({ p: 3000, c: 200, unlinked: 0, stale: 0, dup: 1 });
      // the indexes dropped for the load are back, and the foreign key
      const ix = (await t.pool.query(`select count(*)::int as n from pg_indexes where tablename = 'ds_people'`)).rows[0].n;
      const fk = (await t.pool.query(`select count(*)::int as n from pg_constraint where conrelid = 'ds_people'::regclass and contype = 'f'`)).rows[0].n;
      const keys = (await t.pool.query(`select string_agg(contype::text, '' order by contype) as k from pg_constraint where conrelid = 'ds_people'::regclass and contype in ('p', 'u')`)).rows[0].k;
      expect(ix).toBeGreaterThan(10);
      expect(fk).toBe(1);
      expect(keys).toBe('pu');
      // the skill rows written in one pass (triggers off during the load), their key and the triggers back
      expect(await skillDrift(t.pool)).toBe(0);
      expect((await t.pool.query(`select count(*)::int as n from ds_people_by_skill`)).rows[0].n).toBeGreaterThan(3000);
      const skillState = (await t.pool.query(`select (select count(*)::int from pg_constraint where conrelid = 'ds_people_by_skill'::regclass and contype = 'p') as pk,
        (select count(*)::int from pg_trigger where tgrelid = 'ds_people'::regclass and not tgisinternal and tgenabled = 'O') as triggers`)).rows[0];
      expect(skillState).toEqual({ pk: 1, triggers: 4 });
      // likewise the technology rows of the companies
      expect(await technologyDrift(t.pool)).toBe(0);
      expect((await t.pool.query(`select count(*)::int as n from ds_companies_by_technology`)).rows[0].n).toBeGreaterThan(200);
      const techState = (await t.pool.query(`select (select count(*)::int from pg_constraint where conrelid = 'ds_companies_by_technology'::regclass and contype = 'p') as pk,
        (select count(*)::int from pg_trigger where tgrelid = 'ds_companies'::regclass and not tgisinternal and tgenabled = 'O') as triggers`)).rows[0];
      expect(techState).toEqual({ pk: 1, triggers: 4 });
      // a second import into the now non-empty table upserts through the restored keys (and the triggers)
      const changed = ps.slice(0, 50).map((x, i) => (i < 5 ? x.replace(/"member_skills":\[[^\]]*\]/, '"member_skills":["Changed Skill","Changed Skill"]') : x));
      expect(changed[0]).toContain('Changed Skill');
      const again = await importDataset(t.pool, { people: file('gp2.jsonl', changed.join('\n')) });
      expect(again.errorCount).toBe(0);
      expect((await t.pool.query(`select count(*)::int as n from ds_people`)).rows[0].n).toBe(3000);
      expect(await skillDrift(t.pool)).toBe(0);
      // a re-import of companies (triggers on) keeps the technology rows in step
      const again2 = await importDataset(t.pool, { companies: file('gc2.jsonl', cs.slice(0, 20).map((x, i) => (i < 3 ? x.replace(/"technologies":\[[^\]]*\]/, '"technologies":["Changed Tech"]') : x)).join('\n')) });
      expect(again2.errorCount).toBe(0);
      expect(await technologyDrift(t.pool)).toBe(0);
      expect((await t.pool.query(`select count(*)::int as n from ds_companies_by_technology where technology = 'Changed Tech'`)).rows[0].n).toBe(3);
      expect(await skillDrift(t.pool)).toBe(0);
      expect((await t.pool.query(`select count(*)::int as n from ds_people_by_skill where skill = 'Changed Skill'`)).rows[0].n).toBe(
        changed.slice(0, 5).filter((x) => !x.includes('"member_location_country":null')).length,
      );
    } finally {
      await t.close();
    }
  });
});

describe('dataset generator', () => {
  it('is deterministic for a seed and realistic in shape', () => {
    const a = [...generateDataset({ people: 300, companies: 30, seed: 9 })];
    const b = [...generateDataset({ people: 300, companies: 30, seed: 9 })];
    const c = [...generateDataset({ people: 300, companies: 30, seed: 10 })];
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(c));
    const people = a.filter((x) => x.kind === 'person').map((x) => x.record as Record<string, any>);
    const companies = a.filter((x) => x.kind === 'company').map((x) => x.record as Record<string, any>);
    expect(companies.every((x) => /^\d+-\d+$/.test(x.size_range) && x.employee_count >= Number(x.size_range.split('-')[0]) && x.employee_count <= Number(x.size_range.split('-')[1]))).toBe(true);
    const us = people.filter((p) => p.member_location_country === 'United States').length;
    expect(us).toBeGreaterThan(people.length * 0.25); // skewed, not uniform
    expect(new Set(people.map((p) => p.member_pronet_url)).size).toBe(people.length);
  });

  it('the CLI writes the same files for the same seed', () => {
    const tsx = createRequire(import.meta.url).resolve('tsx/cli');
    const run = (out: string) => execFileSync(process.execPath, [tsx, join(ROOT_DIR, 'scripts/dataset.ts'), 'generate', '--people', '500', '--companies', '50', '--seed', '3', '--out', out], { stdio: 'pipe' });
    run(join(dir, 'g1'));
    run(join(dir, 'g2'));
    for (const f of ['people.jsonl', 'companies.jsonl', 'posts.jsonl']) expect(readFileSync(join(dir, 'g1', f), 'utf8')).toBe(readFileSync(join(dir, 'g2', f), 'utf8'));
    expect(readFileSync(join(dir, 'g1', 'people.jsonl'), 'utf8').split('\n').filter(Boolean)).toHaveLength(500);
  });
});
