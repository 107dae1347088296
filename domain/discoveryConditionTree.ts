/**
 * The condition tree of a v2 discovery search rewritten for an engine (docs/DISCOVERY.md
 * "Engines"): both engines — the SQL of db/discoveryWhere.ts and the OpenSearch query of
 * db/discoveryOpenSearch.ts — compile this form, so they cannot drift apart on what a NOT or a
 * person condition in a company search means.
 *
 * - Negation normal form: a NOT group is pushed down to the leaves by De Morgan (AND and OR swap
 *   under a negation; `NOT (a, b)` is `NOT (a AND b)`). A leaf keeps its negation as a flag, so each
 *   engine negates it its own way (the SQL compiler's `not coalesce(…, false)`, OpenSearch's
 *   `must_not`): a missing value matches no positive operator and every negative one.
 * - In a company search, the person-only (`dsContact.*`) children of a group are one `people`
 *   node: met by the same person of the company, under the group's own operator (`NOT` is `AND`
 *   there, its negation stays outside); a person-only leaf alone is a `people` node of that leaf.
 *
 * The input is validated before (the SQL compiler's pass, with JSON pointers in its 400s).
 */
import type { Condition } from './conditions.js';
import { PERSON_PREFIX, type DiscoveryEntity } from './discoveryCatalog.js';

/** A condition tree in negation normal form, with a company search's person conditions grouped. */
export type NormalNode =
  | { kind: 'leaf'; condition: Condition; negated: boolean }
  /** Some person of the company meets `match` (a tree over person fields; negated: no person does). */
  | { kind: 'people'; match: NormalNode; negated: boolean }
  | { kind: 'and' | 'or'; parts: NormalNode[] };

export interface ConditionGroup {
  operator: string;
  conditions: unknown[];
}

export const isGroup = (n: unknown): n is ConditionGroup => typeof n === 'object' && n !== null && 'conditions' in n;

/** True when every leaf under `node` is a person (`dsContact.*`) condition. */
export function personOnly(node: unknown): boolean {
  if (isGroup(node)) return node.conditions.every(personOnly);
  const field = (node as { field?: unknown }).field;
  return typeof field === 'string' && field.startsWith(PERSON_PREFIX);
}

/** Whether a group is a conjunction once the negation above it is pushed down (De Morgan). */
export const isConjunction = (operator: string, negated: boolean): boolean => (operator.toUpperCase() === 'AND' ? !negated : negated);

/** The negation a group's children are evaluated under: a NOT group flips it. */
export const childNegated = (operator: string, negated: boolean): boolean => (operator.toUpperCase() === 'NOT' ? !negated : negated);

/** `node` evaluated under `negated`, in negation normal form (see the module comment). */
export function normalForm(entity: DiscoveryEntity, node: unknown, negated = false): NormalNode {
  if (!isGroup(node)) {
    if (entity === 'company' && personOnly(node)) return { kind: 'people', match: normalForm('contact', node), negated };
    return { kind: 'leaf', condition: node as Condition, negated };
  }
  const kidNegated = childNegated(node.operator, negated);
  const parts: NormalNode[] = [];
  let kids = node.conditions;
  if (entity === 'company') {
    const persons = kids.filter(personOnly);
    kids = kids.filter((k) => !personOnly(k));
    if (persons.length) {
      // inside the person match the persons' own group operator applies, un-negated
      const group = { operator: node.operator.toUpperCase() === 'OR' ? 'OR' : 'AND', conditions: persons };
      parts.push({ kind: 'people', match: normalForm('contact', group), negated: kidNegated });
    }
  }
  for (const k of kids) parts.push(normalForm(entity, k, kidNegated));
  return { kind: isConjunction(node.operator, negated) ? 'and' : 'or', parts };
}

/** The root group of a v2 search's `conditions` AND `groupedCondition`, or null without any. */
export function rootGroup(input: { conditions?: unknown[]; groupedCondition?: unknown }): ConditionGroup | null {
  const kids = [...(input.conditions ?? []), ...(input.groupedCondition ? [input.groupedCondition] : [])];
  return kids.length ? { operator: 'AND', conditions: kids } : null;
}
