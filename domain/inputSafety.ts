/**
 * What no input may carry, wherever it sits (request bodies, query strings, path parameters, and
 * the rows of an imported contacts file): PostgreSQL stores neither NUL nor lone surrogates, and
 * deep nesting or prototype keys are hostile.
 */
import { escapePointer, type ErrorDetail } from './errors.js';

/**
 * Characters as people, the networks and the schemas' `minLength`/`maxLength` (ajv) count them:
 * code points, not UTF-16 units (`"😀".length` is 2).
 */
export const charCount = (s: string): number => [...s].length;

/** Deeper JSON than this is refused: `JSON.stringify`, ajv and PostgreSQL's jsonb recurse. */
export const MAX_JSON_DEPTH = 64;
const MAX_UNSAFE_DETAILS = 20;


// Cheap first test: most strings hold neither NUL nor any surrogate.
const SUSPECT_CHAR = /[\u0000\uD800-\uDFFF]/;

export function unsafeString(s: string): string | undefined {
  if (!SUSPECT_CHAR.test(s)) return undefined;
  if (s.includes('\u0000')) return 'must not contain NUL (U+0000) characters';
  // A lone surrogate has no UTF-8 form: PostgreSQL refuses its `\ud800` escape in jsonb.
  // (`isWellFormed` is ES2024, in Node ≥ 20; the project's TypeScript lib is ES2023.)
  if (!(s as string & { isWellFormed(): boolean }).isWellFormed()) return 'must be well-formed Unicode (no lone surrogates)';
  return undefined;
}

const isPrototypeKey = (k: string, child: unknown) =>
  k === '__proto__' || (k === 'constructor' && !!child && typeof child === 'object' && Object.hasOwn(child, 'prototype'));

/**
 * What no body, query string or path parameter may carry, wherever it sits: NUL characters and
 * lone surrogates in keys or values (PostgreSQL stores neither in text or jsonb), numbers beyond
 * a double's range (`1e400`), keys that reach an object's prototype (`__proto__`,
 * `constructor.prototype`), and nesting deeper than {@link MAX_JSON_DEPTH}. Returns one detail per offending JSON pointer (at most 20); nothing is
 * stripped. The recursion stops at {@link MAX_JSON_DEPTH}, so hostile nesting cannot overflow
 * the stack. A 27 MiB bulk body of 100,000 rows takes ~150 ms, about as long as parsing it.
 */
export function unsafeInputDetails(value: unknown, prefix = ''): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  // The pointer is only spelled out for an offending node: the walk keeps a stack of tokens.
  const tokens: (string | number)[] = [];
  const report = (message: string, last?: string) => {
    const all = last === undefined ? tokens : [...tokens, last];
    const path = prefix + all.map((t) => `/${typeof t === 'string' ? escapePointer(t) : t}`).join('');
    out.push({ path: path || '/', message });
  };
  const visit = (v: unknown, depth: number): void => {
    if (typeof v === 'string') {
      const problem = unsafeString(v);
      if (problem) report(problem);
      return;
    }
    // `1e400` parses to Infinity, which no column or JSON output can carry.
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) report('is out of range for a number');
      return;
    }
    if (!v || typeof v !== 'object') return;
    if (depth >= MAX_JSON_DEPTH) return report(`nests deeper than ${MAX_JSON_DEPTH} levels`);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && out.length < MAX_UNSAFE_DETAILS; i++) {
        const x = v[i];
        if (!x || typeof x === 'boolean') continue;
        tokens.push(i);
        visit(x, depth + 1);
        tokens.pop();
      }
      return;
    }
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (out.length >= MAX_UNSAFE_DETAILS) return;
      const child = o[k];
      const keyProblem = unsafeString(k);
      if (keyProblem) report(`key ${keyProblem}`, k);
      else if (isPrototypeKey(k, child)) report('is not allowed: the key reaches the object prototype', k);
      else if (child && typeof child !== 'boolean') {
        tokens.push(k);
        visit(child, depth + 1);
        tokens.pop();
      }
    }
  };
  visit(value, 0);
  return out;
}
