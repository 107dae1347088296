/**
 * The filter engine against an independent oracle: generated contacts are ingested through the
 * API, random condition trees (every operator of every field type, nested AND/OR/NOT groups) are
 * sent to `POST /contacts/filter-contacts`, and the result — paged with keyset tokens and sorted —
 * is compared row for row with a plain JavaScript evaluation of the same tree over the generated
 * rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';

let app: TestApp;
let key: string;

// Deterministic PRNG (mulberry32) so a failure reproduces.
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20261121);
const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const chance = (p: number) => rand() < p;

const FIRST = ['ann', 'bob', 'cyd', 'dee', 'eve', 'flo'] as const;
const LAST = ['lee', 'ng', 'park', 'smith', 'smyth'] as const;
const TITLES = ['cto', 'vp sales', 'engineer', 'sales engineer', 'ceo'] as const;
const EMAILS = Array.from({ length: 25 }, (_, i) => `m${i}@ex${i % 4}.com`);
const COMPANIES = { Acme: 'software', Globex: 'energy', Initech: 'software', Hooli: 'media' } as const;
const TAGS = ['a', 'b', 'c', 'd'] as const;

interface Row {
  pronet: string;
  firstName: string | null;
  lastName: string | null;
  title: string | null;
  emails: string[];
  company: keyof typeof COMPANIES | null;
  score: number | null;
  since: string | null;
  vip: boolean | null;
  tags: string[] | null;
}

const N = 240;
const rows: Row[] = Array.from({ length: N }, (_, i) => ({
  pronet: `https://pronet.com/in/oracle-${i}`,
  firstName: chance(0.15) ? null : pick(FIRST),
  lastName: chance(0.2) ? null : pick(LAST),
  title: chance(0.2) ? null : pick(TITLES),
  emails: [...new Set(Array.from({ length: Math.floor(rand() * 3) }, () => pick(EMAILS)))],
  company: chance(0.2) ? null : pick(Object.keys(COMPANIES) as (keyof typeof COMPANIES)[]),
  score: chance(0.25) ? null : Math.floor(rand() * 100),
  since: chance(0.25) ? null : new Date(Date.UTC(2025, Math.floor(rand() * 12), 1 + Math.floor(rand() * 28))).toISOString(),
  vip: chance(0.3) ? null : chance(0.5),
  tags: chance(0.25) ? null : [...new Set(Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(TAGS)))],
}));

type FieldKind = 'string' | 'number' | 'date' | 'boolean' | 'multi';
interface OracleField {
  path: string;
  kind: FieldKind;
  get(r: Row): unknown;
  values: readonly unknown[];
}
let fields: OracleField[] = [];
const idByPronet = new Map<string, string>();

const OPS: Record<FieldKind, string[]> = {
  string: ['==', '!=', 'LIKE', 'NOT LIKE', 'IN', 'NOT IN', 'IS EMPTY', 'IS NOT EMPTY'],
  number: ['==', '!=', '>', '>=', '<', '<=', 'BETWEEN', 'IN', 'IS EMPTY', 'IS NOT EMPTY'],
  date: ['==', '!=', '>', '>=', '<', '<=', 'BETWEEN', 'IN', 'IS EMPTY', 'IS NOT EMPTY'],
  boolean: ['==', '!=', 'IS EMPTY', 'IS NOT EMPTY'],
  multi: ['IN', 'ALL', 'NOT IN', 'IS EMPTY', 'IS NOT EMPTY'],
};

function likeToRegex(p: string): RegExp {
  let re = '';
  for (const ch of p) re += ch === '%' ? '.*' : ch === '_' ? '.' : ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${re}$`, 'is');
}

/** Plain-JS truth of a leaf: a missing value matches no positive operator. */
function evalLeaf(f: OracleField, op: string, value: unknown, r: Row): boolean {
  const v = f.get(r);
  const missing = v === null || v === undefined;
  const cmp = (x: unknown) => (f.kind === 'date' ? Date.parse(x as string) : (x as number));
  switch (op) {
    case 'IS EMPTY':
      return missing || v === '' || (Array.isArray(v) && v.length === 0);
    case 'IS NOT EMPTY':
      return !evalLeaf(f, 'IS EMPTY', value, r);
    case '==':
      return !missing && (f.kind === 'date' ? cmp(v) === cmp(value) : v === value);
    case '!=':
      return !evalLeaf(f, '==', value, r);
    case '>':
      return !missing && cmp(v) > cmp(value);
    case '>=':
      return !missing && cmp(v) >= cmp(value);
    case '<':
      return !missing && cmp(v) < cmp(value);
    case '<=':
      return !missing && cmp(v) <= cmp(value);
    case 'BETWEEN': {
      const [lo, hi] = value as unknown[];
      return !missing && cmp(v) >= cmp(lo) && cmp(v) <= cmp(hi);
    }
    case 'LIKE':
      return !missing && likeToRegex(value as string).test(v as string);
    case 'NOT LIKE':
      return !evalLeaf(f, 'LIKE', value, r);
    case 'IN':
      if (f.kind === 'multi') return !missing && (value as string[]).some((x) => (v as string[]).includes(x));
      return !missing && (value as unknown[]).some((x) => (f.kind === 'date' ? cmp(x) === cmp(v) : x === v));
    case 'NOT IN':
      return !evalLeaf(f, 'IN', value, r);
    case 'ALL':
      return !missing && (value as string[]).every((x) => (v as string[]).includes(x));
  }
  throw new Error(`oracle: no operator ${op}`);
}

type Node = { field: string; operator: string; value?: unknown } | { operator: 'AND' | 'OR' | 'NOT'; conditions: Node[] };

function evalNode(n: Node, r: Row): boolean {
  if ('conditions' in n) {
    const kids = n.conditions.map((c) => evalNode(c, r));
    if (n.operator === 'AND') return kids.every(Boolean);
    if (n.operator === 'OR') return kids.some(Boolean);
    return !kids.every(Boolean);
  }
  const f = fields.find((x) => x.path === n.field)!;
  return evalLeaf(f, n.operator, n.value, r);
}

function randomLikePattern(): string {
  const base = pick([...FIRST, ...LAST, ...TITLES, 'Acme', 'GLOBEX', 'sales']);
  const s = chance(0.5) ? base.toUpperCase() : base;
  const cut = Math.floor(rand() * s.length);
  const variants = [`${s.slice(0, cut + 1)}%`, `%${s.slice(cut)}`, `%${s.slice(1, -1)}%`, s.replace(/[aeiou]/i, '_'), '%', `${s}%x`];
  return pick(variants);
}

function randomLeaf(): Node {
  const f = pick(fields);
  const op = pick(OPS[f.kind]);
  if (op === 'IS EMPTY' || op === 'IS NOT EMPTY') return { field: f.path, operator: op };
  const one = () => pick(f.values);
  let value: unknown;
  if (op === 'LIKE' || op === 'NOT LIKE') value = randomLikePattern();
  else if (op === 'IN' || op === 'NOT IN' || op === 'ALL') value = [...new Set(Array.from({ length: 1 + Math.floor(rand() * 3) }, one))];
  else if (op === 'BETWEEN') {
    const [a, b] = [one(), one()];
    value = (f.kind === 'date' ? Date.parse(a as string) <= Date.parse(b as string) : (a as number) <= (b as number)) ? [a, b] : [b, a];
  } else value = one();
  return { field: f.path, operator: op, value };
}

function randomTree(depth: number): Node {
  if (depth === 0 || chance(0.35)) return randomLeaf();
  const operator = pick(['AND', 'OR', 'NOT'] as const);
  return { operator, conditions: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => randomTree(depth - 1)) };
}

beforeAll(async () => {
  app = await startTestApp();
  key = (await app.createWorkspace()).apiKey;
  const cf = async (label: string, type: string) => {
    const r = await app.http('POST', '/schema/contact/custom-fields', { apiKey: key, body: { label, type } });
    expect(r.status).toBe(200);
    return r.body.data.writeAccessPath as string;
  };
  const scorePath = await cf('Score', 'number');
  const sincePath = await cf('Since', 'date');
  const vipPath = await cf('VIP', 'boolean');
  const tagsPath = await cf('Tags', 'multi');
  fields = [
    { path: 'contact.firstName', kind: 'string', get: (r) => r.firstName, values: [...FIRST, 'zed'] },
    { path: 'contact.lastName', kind: 'string', get: (r) => r.lastName, values: [...LAST] },
    { path: 'contact.jobTitle', kind: 'string', get: (r) => r.title, values: [...TITLES, 'cfo'] },
    { path: 'contact.emails', kind: 'multi', get: (r) => r.emails, values: [...EMAILS.slice(0, 12), 'nobody@ex.com'] },
    { path: 'company.companyName', kind: 'string', get: (r) => r.company, values: [...Object.keys(COMPANIES), 'Umbrella'] },
    { path: 'company.companyIndustry', kind: 'string', get: (r) => (r.company ? COMPANIES[r.company] : null), values: ['software', 'energy', 'media', 'retail'] },
    { path: scorePath, kind: 'number', get: (r) => r.score, values: [0, 10, 25, 50, 51, 75, 99, 100] },
    { path: sincePath, kind: 'date', get: (r) => r.since, values: ['2025-01-01T00:00:00.000Z', '2025-03-15T00:00:00.000Z', '2025-06-01T00:00:00.000Z', '2025-09-30T00:00:00.000Z', '2026-01-01T00:00:00.000Z', rows.find((r) => r.since)!.since!] },
    { path: vipPath, kind: 'boolean', get: (r) => r.vip, values: [true, false] },
    { path: tagsPath, kind: 'multi', get: (r) => r.tags, values: [...TAGS, 'z'] },
  ];
  const mapping = [
    ['pronet', 'contact.pronet'], ['fn', 'contact.firstName'], ['ln', 'contact.lastName'], ['title', 'contact.jobTitle'], ['emails', 'contact.emails'],
    ['company', 'company.companyName'], ['industry', 'company.companyIndustry'], ['score', scorePath], ['since', sincePath], ['vip', vipPath], ['tags', tagsPath],
  ].map(([sourceFieldName, targetFieldName]) => ({ sourceFieldName, targetFieldName }));
  const src = await app.http('POST', '/sources', { apiKey: key, body: { sourceType: 'importFromWebhook', sourceIdentifier: 'oracle', sourceMeta: { config: { fieldMapping: mapping } } } });
  expect(src.status, JSON.stringify(src.body)).toBe(200);
  const contactsData = rows.map((r) => ({
    pronet: r.pronet, fn: r.firstName, ln: r.lastName, title: r.title, emails: r.emails, company: r.company,
    industry: r.company ? COMPANIES[r.company] : null, score: r.score, since: r.since, vip: r.vip, tags: r.tags,
  }));
  const job = await app.http('POST', `/contacts/${src.body.data.id}/bulk-upsert-contacts`, { apiKey: key, body: { contactsData } });
  expect(job.status, JSON.stringify(job.body)).toBe(202);
  const done = await app.waitForJob(job.body.jobId, key);
  expect(done.jobResponsePayload).toMatchObject({ created: N, failed: 0 });
  const all = await app.http('POST', '/contacts/filter-contacts', { apiKey: key, body: { fields: ['contact.pronet'], limit: 1000 } });
  for (const c of all.body.data) idByPronet.set(c.pronet, c.id);
  expect(idByPronet.size).toBe(N);
});
afterAll(() => app?.close());

async function fetchAll(body: Record<string, unknown>, limit: number): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const res = await app.http('POST', '/contacts/filter-contacts', { apiKey: key, body: { ...body, fields: ['contact.pronet'], limit, ...(token ? { paginationToken: token } : {}) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(...res.body.data.map((c: any) => c.id));
    token = res.body.meta.nextToken;
    if (!token) return out;
  }
  throw new Error('too many pages');
}

function oracle(tree: Node | null, root: Node[], sort?: { field: string; direction: 'asc' | 'desc' }): string[] {
  const match = rows.filter((r) => root.every((c) => evalNode(c, r)) && (!tree || evalNode(tree, r)));
  const withId = match.map((r) => ({ r, id: idByPronet.get(r.pronet)! }));
  withId.sort((a, b) => {
    if (sort) {
      const f = fields.find((x) => x.path === sort.field)!;
      const va = f.get(a.r) as string | number | null;
      const vb = f.get(b.r) as string | number | null;
      const desc = sort.direction === 'desc';
      if (va === null && vb !== null) return desc ? -1 : 1; // ASC NULLS LAST, DESC NULLS FIRST
      if (vb === null && va !== null) return desc ? 1 : -1;
      if (va !== null && vb !== null && va !== vb) return (va < vb ? -1 : 1) * (desc ? -1 : 1);
      return (a.id < b.id ? -1 : 1) * (desc ? -1 : 1);
    }
    return a.id < b.id ? -1 : 1;
  });
  return withId.map((x) => x.id);
}

describe('filter-contacts against the JS oracle', () => {
  it('agrees on 150 random condition trees, row for row, across keyset pages and sorts', async () => {
    let nonEmpty = 0;
    for (let i = 0; i < 150; i++) {
      const tree = randomTree(3) as Node;
      const root = chance(0.4) ? [randomLeaf()] : [];
      const sortField = pick(['contact.firstName', fields[6]!.path, fields[7]!.path, null]);
      const sort = sortField ? { field: sortField, direction: pick(['asc', 'desc'] as const) } : undefined;
      const body: Record<string, unknown> = { groupedCondition: 'conditions' in tree ? tree : { operator: 'AND', conditions: [tree] } };
      if (root.length) body.conditions = root;
      if (sort) body.sort = [sort];
      const expected = oracle(tree, root, sort);
      const got = await fetchAll(body, pick([17, 50, 1000]));
      expect(got, `tree ${i}: ${JSON.stringify(body)}`).toEqual(expected);
      if (expected.length > 0 && expected.length < N) nonEmpty++;
    }
    // The generator must exercise selective filters, not only all-or-nothing ones.
    expect(nonEmpty).toBeGreaterThan(60);
  });

  it('agrees on every operator of every field as a single condition', async () => {
    for (const f of fields) {
      for (const op of OPS[f.kind]) {
        const leaf = (() => {
          for (;;) {
            const l = randomLeaf() as { field: string; operator: string };
            if (l.field === f.path && l.operator === op) return l as Node;
          }
        })();
        const expected = oracle(null, [leaf]);
        const got = await fetchAll({ conditions: [leaf] }, 1000);
        expect(got, JSON.stringify(leaf)).toEqual(expected);
      }
    }
  });
});
