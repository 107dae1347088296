/**
 * Independent in-test oracle for the discovery v2 search: evaluates condition trees in plain
 * JavaScript over the generated records (no SQL), with the documented semantics
 * (domain/conditions.ts header; company search: person conditions of one group are met by the
 * same person), and generates random condition trees from the data.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { importDataset } from '../../db/datasetImport.js';
import { generateDataset, type DsCompanyRecord, type DsPersonRecord } from '../../domain/datasetGenerator.js';
import { normalizeDomain, normalizeProfileUrl } from '../../domain/identity.js';

export interface OPerson {
  id: string;
  rec: DsPersonRecord;
  company: OCompany | null;
}
export interface OCompany {
  id: string;
  rec: DsCompanyRecord;
  people: OPerson[];
}

type Kind = 'string' | 'number' | 'boolean' | 'multi';
interface OField {
  path: string;
  kind: Kind;
  /** Value of the field for a person (contact search) */
  ofPerson?: (p: OPerson) => unknown;
  ofCompany?: (c: OCompany) => unknown;
}

const personVal = (key: keyof DsPersonRecord) => (p: OPerson) => {
  const v = p.rec[key];
  if (key === 'member_pronet_url' || key === 'company_pronet_url') return normalizeProfileUrl(v as string | null);
  if (key === 'member_emails') return (v as { email: string }[]).map((e) => e.email.toLowerCase());
  if (key === 'member_phones') return (v as { number: string }[]).map((e) => e.number);
  return v ?? null;
};
const companyVal = (key: keyof DsCompanyRecord | 'company_domain') => (c: OCompany | null) => {
  if (!c) return null;
  if (key === 'company_domain') return normalizeDomain(c.rec.company_website);
  const v = c.rec[key];
  if (key === 'company_pronet_url') return normalizeProfileUrl(v as string);
  return v ?? null;
};

const P: [keyof DsPersonRecord, Kind][] = [
  ['member_pronet_url', 'string'], ['member_full_name', 'string'], ['member_first_name', 'string'], ['member_last_name', 'string'],
  ['member_job_title', 'string'], ['member_seniority', 'string'], ['member_headline', 'string'], ['member_location_city', 'string'],
  ['member_location_country', 'string'], ['member_skills', 'multi'], ['member_years_experience', 'number'], ['member_emails', 'multi'],
  ['member_phones', 'multi'], ['company_pronet_url', 'string'], ['verified', 'boolean'],
];
const C: [keyof DsCompanyRecord | 'company_domain', Kind][] = [
  ['company_pronet_url', 'string'], ['company_name', 'string'], ['company_website', 'string'], ['company_domain', 'string'], ['industry', 'string'],
  ['size_range', 'string'], ['employee_count', 'number'], ['revenue_min', 'number'], ['revenue_max', 'number'], ['founded_year', 'number'],
  ['hq_city', 'string'], ['hq_state', 'string'], ['hq_country', 'string'], ['technologies', 'multi'], ['verified', 'boolean'],
];

export const FIELDS: OField[] = [
  ...P.map(([k, kind]) => ({ path: `dsContact.${k}`, kind, ofPerson: personVal(k) })),
  ...C.map(([k, kind]) => ({ path: `dsCompany.${k}`, kind, ofPerson: (p: OPerson) => companyVal(k)(p.company), ofCompany: (c: OCompany) => companyVal(k)(c) })),
];
const byPath = new Map(FIELDS.map((f) => [f.path, f]));

function likeToRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (ch === '%') re += '[\\s\\S]*';
    else if (ch === '_') re += '[\\s\\S]';
    else re += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'i');
}

export function evalLeaf(kind: Kind, v: unknown, op: string, value: unknown): boolean {
  if (op === 'IS EMPTY' || op === 'IS NOT EMPTY') {
    const empty = kind === 'string' ? v === null || v === '' : kind === 'multi' ? v === null || (v as unknown[]).length === 0 : v === null;
    return op === 'IS EMPTY' ? empty : !empty;
  }
  if (kind === 'multi') {
    const arr = (v as string[] | null) ?? null;
    const list = value as string[];
    const any = arr !== null && arr.some((x) => list.includes(x));
    if (op === 'IN') return any;
    if (op === 'ALL') return arr !== null && list.every((x) => arr.includes(x));
    return !any; // NOT IN
  }
  const cmp = (a: unknown, b: unknown) => (kind === 'number' ? Number(a) - Number(b) : a === b ? 0 : 1);
  const pos = (pred: (x: unknown) => boolean) => v !== null && v !== undefined && pred(v);
  switch (op) {
    case '==': return pos((x) => cmp(x, value) === 0);
    case '!=': return !pos((x) => cmp(x, value) === 0);
    case '>': return pos((x) => Number(x) > Number(value));
    case '>=': return pos((x) => Number(x) >= Number(value));
    case '<': return pos((x) => Number(x) < Number(value));
    case '<=': return pos((x) => Number(x) <= Number(value));
    case 'BETWEEN': return pos((x) => Number(x) >= Number((value as unknown[])[0]) && Number(x) <= Number((value as unknown[])[1]));
    case 'IN': return pos((x) => (value as unknown[]).some((y) => cmp(x, y) === 0));
    case 'NOT IN': return !pos((x) => (value as unknown[]).some((y) => cmp(x, y) === 0));
    case 'LIKE': return pos((x) => likeToRegex(String(value)).test(String(x)));
    case 'NOT LIKE': return !pos((x) => likeToRegex(String(value)).test(String(x)));
  }
  throw new Error(`oracle: operator ${op}`);
}

export type Node = { field: string; operator: string; value?: unknown } | { operator: string; conditions: Node[] };
const isGroup = (n: Node): n is { operator: string; conditions: Node[] } => 'conditions' in n;

function combine(op: string, vals: boolean[]): boolean {
  if (op === 'AND') return vals.every(Boolean);
  if (op === 'OR') return vals.some(Boolean);
  return !vals.every(Boolean); // NOT
}

export function matchPerson(node: Node, p: OPerson): boolean {
  if (isGroup(node)) return combine(node.operator, node.conditions.map((k) => matchPerson(k, p)));
  const f = byPath.get(node.field)!;
  return evalLeaf(f.kind, f.ofPerson!(p), node.operator, node.value);
}

const personOnly = (n: Node): boolean => (isGroup(n) ? n.conditions.every(personOnly) : n.field.startsWith('dsContact.'));

export function matchCompany(node: Node, c: OCompany): boolean {
  if (!isGroup(node)) {
    if (personOnly(node)) return c.people.some((p) => matchPerson(node, p));
    const f = byPath.get(node.field)!;
    return evalLeaf(f.kind, f.ofCompany!(c), node.operator, node.value);
  }
  const persons = node.conditions.filter(personOnly);
  const others = node.conditions.filter((k) => !personOnly(k));
  const vals: boolean[] = [];
  if (persons.length) {
    const inner = node.operator === 'OR' ? 'OR' : 'AND';
    vals.push(c.people.some((p) => combine(inner, persons.map((k) => matchPerson(k, p)))));
  }
  for (const k of others) vals.push(matchCompany(k, c));
  return combine(node.operator, vals);
}

// ---------------------------------------------------------------------------------------------
// random trees

export class TreeRng {
  constructor(private s: number) {}
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(a: number, b: number) {
    return a + Math.floor(this.next() * (b - a + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
}

const OPS: Record<Kind, string[]> = {
  string: ['==', '!=', 'LIKE', 'NOT LIKE', 'IN', 'NOT IN', 'IS EMPTY', 'IS NOT EMPTY'],
  number: ['==', '!=', '>', '>=', '<', '<=', 'BETWEEN', 'IN', 'IS EMPTY', 'IS NOT EMPTY'],
  boolean: ['==', '!=', 'IS EMPTY', 'IS NOT EMPTY'],
  multi: ['IN', 'ALL', 'NOT IN', 'IS EMPTY', 'IS NOT EMPTY'],
};

function likePattern(r: TreeRng, s: string): string {
  const words = s.split(/\s+/).filter((w) => w.length >= 3);
  const w = words.length ? r.pick(words) : s;
  const cut = w.slice(0, Math.max(3, Math.min(w.length, r.int(3, 7))));
  const variant = r.int(0, 3);
  // case folding of non-ASCII letters depends on the database locale; flip ASCII only
  const flip = /^[\x00-\x7f]*$/.test(cut) ? (r.next() < 0.5 ? cut.toUpperCase() : cut.toLowerCase()) : cut;
  if (variant === 0) return `%${flip}%`;
  if (variant === 1) return `${s.slice(0, 4)}%`;
  if (variant === 2) return `%${s.slice(-4)}`;
  return `%${flip.slice(0, 2)}_${flip.slice(3)}%`;
}

/** A random leaf whose value comes from the data (so it matches something). */
function randomLeaf(r: TreeRng, fields: OField[], sample: () => OPerson): Node {
  for (;;) {
    const f = r.pick(fields);
    const p = sample();
    const raw = f.ofPerson!(p);
    const op = r.pick(OPS[f.kind]);
    if (op === 'IS EMPTY' || op === 'IS NOT EMPTY') return { field: f.path, operator: op };
    if (raw === null || raw === undefined) continue;
    if (f.kind === 'multi') {
      const arr = raw as string[];
      if (!arr.length) continue;
      const vals = [r.pick(arr), ...(r.next() < 0.4 ? [r.pick(arr)] : [])];
      return { field: f.path, operator: op, value: [...new Set(vals)] };
    }
    if (f.kind === 'boolean') return { field: f.path, operator: op, value: raw };
    if (f.kind === 'number') {
      const n = raw as number;
      if (op === 'BETWEEN') return { field: f.path, operator: op, value: [n - r.int(0, 5), n + r.int(0, 50)] };
      if (op === 'IN') return { field: f.path, operator: op, value: [n, (f.ofPerson!(sample()) as number | null) ?? n] };
      return { field: f.path, operator: op, value: r.next() < 0.3 ? String(n) : n };
    }
    const s = raw as string;
    if (op === 'LIKE' || op === 'NOT LIKE') return { field: f.path, operator: op, value: likePattern(r, s) };
    if (op === 'IN' || op === 'NOT IN') {
      const other = f.ofPerson!(sample());
      return { field: f.path, operator: op, value: [s, ...(typeof other === 'string' ? [other] : [])] };
    }
    return { field: f.path, operator: op, value: s };
  }
}

export function randomTree(r: TreeRng, fields: OField[], sample: () => OPerson, depth = 0): Node {
  if (depth >= 3 || (depth > 0 && r.next() < 0.45)) return randomLeaf(r, fields, sample);
  const op = r.pick(['AND', 'AND', 'OR', 'OR', 'NOT']);
  const n = r.int(1, 3);
  return { operator: op, conditions: Array.from({ length: n }, () => randomTree(r, fields, sample, depth + 1)) };
}

// ---------------------------------------------------------------------------------------------
// the dataset under test

/**
 * Generates a dataset (deterministic for a seed), imports it with the dataset importer and
 * returns the oracle's records with the ids the import assigned (borrowed only to compare rows).
 */
export async function loadOracleDataset(pool: pg.Pool, size: { people: number; companies: number; seed: number }): Promise<{ people: OPerson[]; companies: OCompany[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'ds-test-'));
  const comps: DsCompanyRecord[] = [];
  const ppl: DsPersonRecord[] = [];
  for (const item of generateDataset(size)) {
    if (item.kind === 'company') comps.push(item.record);
    else ppl.push(item.record);
  }
  writeFileSync(join(dir, 'companies.jsonl'), comps.map((c) => JSON.stringify(c)).join('\n'));
  writeFileSync(join(dir, 'people.jsonl'), ppl.map((p) => JSON.stringify(p)).join('\n'));
  const report = await importDataset(pool, { companies: join(dir, 'companies.jsonl'), people: join(dir, 'people.jsonl') });
  if (report.errorCount) throw new Error(`the generated dataset did not import cleanly: ${report.errorCount} errors`);
  const cIds = new Map((await pool.query(`select id, company_pronet_url from ds_companies`)).rows.map((r) => [r.company_pronet_url, r.id]));
  const pIds = new Map((await pool.query(`select id, member_pronet_url from ds_people`)).rows.map((r) => [r.member_pronet_url, r.id]));
  const companies: OCompany[] = comps.map((rec) => ({ id: cIds.get(normalizeProfileUrl(rec.company_pronet_url))!, rec, people: [] }));
  const byUrl = new Map(companies.map((c) => [normalizeProfileUrl(c.rec.company_pronet_url), c]));
  const people = ppl.map((rec) => {
    const company = rec.company_pronet_url ? (byUrl.get(normalizeProfileUrl(rec.company_pronet_url)) ?? null) : null;
    const p: OPerson = { id: pIds.get(normalizeProfileUrl(rec.member_pronet_url))!, rec, company };
    company?.people.push(p);
    return p;
  });
  if (!people.every((p) => p.id) || !companies.every((c) => c.id)) throw new Error('an imported record has no id');
  return { people, companies };
}
