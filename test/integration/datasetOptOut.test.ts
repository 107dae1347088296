/**
 * Dataset opt-outs (issue 30 item 3, docs/PRIVACY.md), run as the operator runs them: the dataset
 * is loaded by `npm run dataset -- import` and the opt-out list applied by
 * `npm run admin -- dataset:opt-out` (child processes on the test's database). An opted-out
 * person is then absent from find-contacts-v2, find-verified-contacts and enrichment (the
 * built-in `dataset` provider), and stays absent when the same file is imported again.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { ROOT_DIR } from '../../domain/config.js';
import { importDataset } from '../../db/datasetImport.js';
import type { NewWorkspace } from '../../db/workspaces.js';

let app: TestApp;
const dir = mkdtempSync(join(tmpdir(), 'ds-opt-out-'));

beforeAll(async () => {
  const config = {
    providers: { dataset: { type: 'dataset' } },
    waterfall: { emails: ['dataset'], phoneNumbers: ['dataset'], basic_contact_data: ['dataset'], basic_company_data: ['dataset'], pronetPosts: ['dataset'] },
    retry: { maxAttempts: 2, initialIntervalMs: 100, maxIntervalMs: 1000, maxRetryAfterMs: 5000 },
  };
  app = await startTestApp({ env: { ENRICHMENT_CONFIG: JSON.stringify(config) } });
}, 120_000);
afterAll(() => app?.close());

/** `npm run <script> -- …` as a child process against this test's database. */
function run(script: 'admin' | 'dataset', args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT_DIR, 'scripts', `${script}.ts`), ...args], {
    env: { ...process.env, DATABASE_URL: app.config.databaseUrl, SERVER_SECRET: app.config.serverSecret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const tag = randomBytes(4).toString('hex');
const title = `Opt Officer ${tag}`;
const company = `https://pronet.example/company/optco-${tag}`;
const personRecord = (name: string) => ({
  member_pronet_url: `https://www.pronet.example/in/${name}-${tag}/`,
  member_full_name: `${name[0]!.toUpperCase()}${name.slice(1)} Person${tag}`,
  member_job_title: title,
  member_seniority: 'Director',
  member_location_country: 'Germany',
  member_emails: [{ email: `${name}.${tag}@optco.example`, status: 'valid' }],
  company_pronet_url: company,
  verified: true,
});
const gone = personRecord('gone');
const byId = personRecord('byid');
const kept = personRecord('kept');
const bare = (url: string) => url.replace('https://www.', '').replace(/\/$/, '');

async function findV2(ws: NewWorkspace): Promise<string[]> {
  const r = await app.http('POST', '/discovery-search/find-contacts-v2', {
    apiKey: ws.apiKey,
    body: { conditions: [{ field: 'dsContact.member_job_title', operator: '==', value: title }], fields: ['dsContact.member_pronet_url', 'dsContact.member_emails'] },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.map((x: any) => JSON.stringify(x)).sort();
}

async function findVerified(ws: NewWorkspace): Promise<string[]> {
  const r = await app.http('POST', '/discovery-search/find-verified-contacts', {
    apiKey: ws.apiKey,
    body: { limit: 10, fields: ['fullName', 'pronet', 'emails'], inputFieldMapping: [{ sourceFieldName: 'jobTitleInclude', userInput: [title] }] },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.map((x: any) => JSON.stringify(x)).sort();
}

async function enrichment(ws: NewWorkspace, pronet: string) {
  const r = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: ['basic_contact_data', 'emails'], pronet } });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const job = await app.waitForJob(r.body.jobId, ws.apiKey);
  expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
  return job.jobResponsePayload;
}

const mentions = (rows: string[], p: ReturnType<typeof personRecord>) => rows.some((r) => r.includes(bare(p.member_pronet_url)) || r.includes(p.member_emails[0]!.email));

describe('dataset opt-outs', () => {
  it('removes opted-out people from discovery, verified search and enrichment, and keeps them out of a re-import', async () => {
    const ws = await app.createWorkspace({ credits: 100_000 });
    const companies = join(dir, 'companies.jsonl');
    const people = join(dir, 'people.jsonl');
    writeFileSync(companies, JSON.stringify({ company_pronet_url: company, company_name: `OptCo ${tag}`, industry: 'Software', size_range: '11-50', employee_count: 20, verified: true }) + '\n');
    writeFileSync(people, [gone, byId, kept].map((p) => JSON.stringify(p)).join('\n') + '\n');
    const first = await run('dataset', ['import', '--companies', companies, '--people', people]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/people: 3 loaded, 0 rejected, 0 opted out/);

    // everyone is findable before
    for (const p of [gone, byId, kept]) {
      expect(mentions(await findV2(ws), p)).toBe(true);
      expect(mentions(await findVerified(ws), p)).toBe(true);
    }
    const before = await enrichment(ws, gone.member_pronet_url);
    expect(before.slices.basic_contact_data.status).toBe('found');
    expect(JSON.stringify(before)).toContain(gone.member_emails[0]!.email);

    // the operator's list: one person by email (upper-cased, as vendors' lists come), one by dataset id
    const id = (await app.pool.query(`select id from ds_people where member_pronet_url = $1`, [bare(byId.member_pronet_url)])).rows[0].id as string;
    const list = join(dir, 'opt-out.txt');
    writeFileSync(list, `# opt-outs received ${tag}\n${gone.member_emails[0]!.email.toUpperCase()}\n\n`);
    const bad = await run('admin', ['dataset:opt-out', '--file', list, '--person-id', id, '--email', 'not-an-email@', '--json']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error).toMatch(/nothing applied: argument "not-an-email@" is not an email address/);
    expect((await app.pool.query(`select count(*)::int as n from dataset_opt_outs`)).rows[0].n).toBe(0);
    const applied = await run('admin', ['dataset:opt-out', '--file', list, '--person-id', id, '--json']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
    // each person's profile URL and email are listed, whichever identifier named them
    expect(JSON.parse(applied.stdout)).toEqual({ entriesAdded: 4, peopleRemoved: 2, postsRemoved: 0, unknownPersonIds: 0 });
    const stored = (await app.pool.query(`select * from dataset_opt_outs`)).rows;
    expect(stored.map((r) => r.kind).sort()).toEqual(['email', 'email', 'profileUrl', 'profileUrl']);
    for (const p of [gone, byId]) expect(JSON.stringify(stored).toLowerCase()).not.toContain(p.member_emails[0]!.email.split('@')[0]);
    expect(JSON.stringify(stored)).not.toContain(tag);

    const check = async () => {
      const v2 = await findV2(ws);
      const verified = await findVerified(ws);
      expect([mentions(v2, gone), mentions(v2, byId), mentions(v2, kept)]).toEqual([false, false, true]);
      expect([mentions(verified, gone), mentions(verified, byId), mentions(verified, kept)]).toEqual([false, false, true]);
      const after = await enrichment(ws, gone.member_pronet_url);
      expect(after.slices.basic_contact_data.status).toBe('not_found');
      expect(after.slices.emails.status).toBe('not_found');
      expect(JSON.stringify(after)).not.toContain(gone.member_emails[0]!.email);
      expect((await enrichment(ws, kept.member_pronet_url)).slices.basic_contact_data.status).toBe('found');
    };
    await check();

    // `npm run dataset` re-imports the same file: the opted-out records are skipped and counted
    const again = await run('dataset', ['import', '--companies', companies, '--people', people]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/people: 1 loaded, 0 rejected, 2 opted out/);
    await check();
    expect((await app.pool.query(`select count(*)::int as n from ds_people where member_pronet_url = any($1)`, [[gone, byId].map((p) => bare(p.member_pronet_url))])).rows[0].n).toBe(0);

    // an import without the key would let them back in: it refuses to run
    await expect(importDataset(app.pool, { people })).rejects.toThrow(/opt-out list has 4 entries/);
  }, 180_000);

  it('refuses an opt-out file line that is no identifier, naming the line, and applies nothing', async () => {
    const list = join(dir, 'bad.txt');
    writeFileSync(list, `someone.${tag}@optco.example\nnot a url at all\n`);
    const r = await run('admin', ['dataset:opt-out', '--file', list, '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toContain(`${list}:2: is no email, profile URL or dataset person id`);
  }, 60_000);
});
