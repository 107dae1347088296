/** The rewritten condition tree both discovery engines compile (domain/discoveryConditionTree.ts). */
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../domain/conditions.js';
import { normalForm, rootGroup, type NormalNode } from '../../domain/discoveryConditionTree.js';

const leaf = (field: string, value = 'x'): Condition => ({ field, operator: '==', value });
const group = (operator: string, ...conditions: unknown[]) => ({ operator, conditions });
const pos = (c: Condition): NormalNode => ({ kind: 'leaf', condition: c, negated: false });
const neg = (c: Condition): NormalNode => ({ kind: 'leaf', condition: c, negated: true });

const title = leaf('dsContact.member_job_title');
const country = leaf('dsContact.member_location_country');
const industry = leaf('dsCompany.industry');
const name = leaf('dsCompany.company_name');

/** Mulberry32: fixed seed, so a failure replays. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    let t = (s = (s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('normalForm', () => {
  it('pushes a NOT down to the leaves (De Morgan): NOT (a, b) is ¬a OR ¬b, a NOT under a NOT is an AND', () => {
    expect(normalForm('contact', group('NOT', title, industry))).toEqual({ kind: 'or', parts: [neg(title), neg(industry)] });
    expect(normalForm('contact', group('NOT', group('NOT', title, industry)))).toEqual({ kind: 'or', parts: [{ kind: 'and', parts: [pos(title), pos(industry)] }] });
    expect(normalForm('contact', group('NOT', group('OR', title, group('AND', industry, name))))).toEqual({
      kind: 'or',
      parts: [{ kind: 'and', parts: [neg(title), { kind: 'or', parts: [neg(industry), neg(name)] }] }],
    });
    expect(normalForm('contact', group('AND', title), true)).toEqual({ kind: 'or', parts: [neg(title)] });
  });

  it('keeps every condition of a contact search a leaf, person or company', () => {
    expect(normalForm('contact', group('AND', title, industry, group('OR', country, name)))).toEqual({
      kind: 'and',
      parts: [pos(title), pos(industry), { kind: 'or', parts: [pos(country), pos(name)] }],
    });
  });

  it('groups a company search\'s person conditions of one group into one match, met by the same person', () => {
    expect(normalForm('company', group('AND', title, industry, country))).toEqual({
      kind: 'and',
      parts: [{ kind: 'people', negated: false, match: { kind: 'and', parts: [pos(title), pos(country)] } }, pos(industry)],
    });
    expect(normalForm('company', group('OR', title, industry, country))).toEqual({
      kind: 'or',
      parts: [{ kind: 'people', negated: false, match: { kind: 'or', parts: [pos(title), pos(country)] } }, pos(industry)],
    });
    // a person-only group is one child of the persons' group, not a match of its own
    expect(normalForm('company', group('AND', group('OR', title, country), name))).toEqual({
      kind: 'and',
      parts: [{ kind: 'people', negated: false, match: { kind: 'and', parts: [{ kind: 'or', parts: [pos(title), pos(country)] }] } }, pos(name)],
    });
  });

  it('negates a company search\'s person match as a whole: no person of the company meets it', () => {
    // NOT (title, country, industry): no person with both, or not the industry
    expect(normalForm('company', group('NOT', title, country, industry))).toEqual({
      kind: 'or',
      parts: [{ kind: 'people', negated: true, match: { kind: 'and', parts: [pos(title), pos(country)] } }, neg(industry)],
    });
    // a lone person leaf under a negation: the positive leaf, matched by no person
    expect(normalForm('company', title, true)).toEqual({ kind: 'people', negated: true, match: pos(title) });
    // OR under a negation: the persons' OR stays inside, un-negated; the match is negated outside
    expect(normalForm('company', group('OR', title, country, name), true)).toEqual({
      kind: 'and',
      parts: [{ kind: 'people', negated: true, match: { kind: 'or', parts: [pos(title), pos(country)] } }, neg(name)],
    });
  });

  it('is the same boolean function as the tree it rewrites (300 random trees, every assignment of their leaves)', () => {
    const next = rng(20261129);
    const fields = ['dsContact.a', 'dsContact.b', 'dsCompany.c', 'dsCompany.d'];
    const randomTree = (depth: number): unknown =>
      depth >= 3 || (depth > 0 && next() < 0.4)
        ? leaf(fields[Math.floor(next() * fields.length)]!, String(Math.floor(next() * 2)))
        : group(['AND', 'OR', 'NOT', 'and', 'Or'][Math.floor(next() * 5)]!, ...Array.from({ length: 1 + Math.floor(next() * 3) }, () => randomTree(depth + 1)));
    const key = (c: Condition) => `${c.field}=${String(c.value)}`;
    const keys = fields.flatMap((f) => [`${f}=0`, `${f}=1`]);
    const direct = (n: unknown, t: Set<string>): boolean => {
      if (!(typeof n === 'object' && n !== null && 'conditions' in n)) return t.has(key(n as Condition));
      const g = n as { operator: string; conditions: unknown[] };
      const op = g.operator.toUpperCase();
      if (op === 'OR') return g.conditions.some((k) => direct(k, t));
      const and = g.conditions.every((k) => direct(k, t));
      return op === 'NOT' ? !and : and;
    };
    const rewritten = (n: NormalNode, t: Set<string>): boolean => {
      if (n.kind === 'leaf') return t.has(key(n.condition)) !== n.negated;
      if (n.kind === 'people') throw new Error('a contact search has no person match');
      return n.kind === 'and' ? n.parts.every((p) => rewritten(p, t)) : n.parts.some((p) => rewritten(p, t));
    };
    for (let i = 0; i < 300; i++) {
      const tree = randomTree(0);
      const negated = next() < 0.5;
      const nf = normalForm('contact', tree, negated);
      for (let mask = 0; mask < 1 << keys.length; mask += 1 + Math.floor(next() * 7)) {
        const t = new Set(keys.filter((_, b) => mask & (1 << b)));
        expect(rewritten(nf, t), `${JSON.stringify(tree)} negated=${negated} true=${[...t].join(',')}`).toBe(direct(tree, t) !== negated);
      }
    }
  });
});

describe('rootGroup', () => {
  it('ANDs a search\'s conditions and its grouped condition, null without any', () => {
    expect(rootGroup({})).toBeNull();
    expect(rootGroup({ conditions: [] })).toBeNull();
    expect(rootGroup({ conditions: [title], groupedCondition: group('OR', industry, name) })).toEqual({ operator: 'AND', conditions: [title, group('OR', industry, name)] });
  });
});
