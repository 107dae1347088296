/**
 * ajv compiled once per schema. Bodies are validated strictly (no coercion, unknown properties
 * rejected by the schemas' `additionalProperties: false`); query strings and path params are
 * strings on the wire, so they are coerced to the schema's types and defaults are applied.
 */
import { Ajv, type ErrorObject, type ValidateFunction, type Vocabulary } from 'ajv';
import nextVocabularyModule from 'ajv/dist/vocabularies/next.js';
import addFormatsModule from 'ajv-formats';
import type { IncomingMessage } from 'node:http';
import type { TSchema } from '@sinclair/typebox';
import { escapePointer, type ErrorDetail } from '../domain/errors.js';
import { ApiError } from './errors.js';
import { unsafeInputDetails } from '../domain/inputSafety.js';
import { numberInput } from '../domain/conditions.js';
import { KEY_RULES, NO_NUL, VALUE_RULES, sharedSchemas } from './schemas/common.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
/**
 * JSON Schema 2019-09 keywords the published (OpenAPI 3.1) schemas use, `dependentRequired`
 * (UnifiedDataBody's names in pairs) among them: draft-07 ajv ignores them unless added.
 */
const nextVocabulary: Vocabulary = Array.isArray(nextVocabularyModule) ? nextVocabularyModule : (nextVocabularyModule as unknown as { default: Vocabulary }).default;

/**
 * What no input may carry (domain/inputSafety.ts, checked before the schemas) said in the schemas
 * too: every free string of a request (no pattern, format or literal of its own) gets a pattern
 * without NUL, so a client generated from the document, or a fuzzer, knows it.
 */
export function noNul(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(noNul);
  if (!schema || typeof schema !== 'object') return schema;
  const o = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = k === 'examples' || k === 'default' || k === 'const' || k === 'enum' ? v : noNul(v);
  if (o.type === 'string' && o.pattern === undefined && o.format === undefined && o.const === undefined && o.enum === undefined && o.contentMediaType === undefined) out.pattern = NO_NUL;
  return out;
}

function makeAjv(coerce: boolean): Ajv {
  // strictNumbers: `1e400` parses to Infinity, which is no number any column can hold
  // verbose: an error carries its keyword's schema, so narrowUnions can see a union's branches
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: false, strictNumbers: true, coerceTypes: coerce ? 'array' : false, useDefaults: coerce });
  addFormats(ajv);
  ajv.addVocabulary(nextVocabulary);
  for (const s of sharedSchemas) ajv.addSchema(noNul(s) as object);
  return ajv;
}
const bodyAjv = makeAjv(false);
const stringAjv = makeAjv(true);

const sharedIds = new Map(sharedSchemas.map((s) => [s.$id as string, s]));

/** Replaces embedded copies of shared schemas by `$ref`s so each `$id` exists once. */
export function refShared(schema: unknown, top = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => refShared(s, false));
  if (!schema || typeof schema !== 'object') return schema;
  const o = schema as Record<string, unknown>;
  if (!top && typeof o.$id === 'string' && sharedIds.has(o.$id)) return { $ref: o.$id };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = refShared(v, false);
  return out;
}

const cache = new WeakMap<TSchema, ValidateFunction>();
function compile(schema: TSchema, coerce: boolean): ValidateFunction {
  let fn = cache.get(schema);
  if (!fn) {
    fn = (coerce ? stringAjv : bodyAjv).compile(noNul(refShared(schema)) as object);
    cache.set(schema, fn);
  }
  return fn;
}

/** A schema that only admits literals: `const`, `enum` or a union of `const`s. */
function isLiteral(s: unknown): boolean {
  const o = s as { const?: unknown; enum?: unknown; anyOf?: unknown[] } | undefined;
  return !!o && (o.const !== undefined || Array.isArray(o.enum) || (Array.isArray(o.anyOf) && o.anyOf.every((b) => (b as { const?: unknown })?.const !== undefined)));
}

/** A string told by its pattern (`contact.customFields.<id>`: a family of literals the document cannot list). */
const isPatterned = (s: unknown): boolean => (s as { type?: unknown; pattern?: unknown } | undefined)?.type === 'string' && typeof (s as { pattern?: unknown }).pattern === 'string';

const tagCache = new WeakMap<object, string[]>();
/**
 * The discriminators of a union of objects, in property order: the properties every branch gives
 * a literal, or in some branches a pattern (`field` and `operator` of a condition, `type` of a
 * custom field). None when a branch is not an inline object schema (a `$ref`, a scalar).
 */
function tagsOf(branches: unknown): string[] {
  if (!Array.isArray(branches) || branches.length < 2) return [];
  let tags = tagCache.get(branches);
  if (!tags) {
    const props = branches.map((b) => (b as { type?: unknown; properties?: Record<string, unknown> })).map((b) => (b?.type === 'object' ? b.properties : undefined));
    tags = props.every((p) => p)
      ? Object.keys(props[0]!).filter((k) => props.every((p) => isLiteral(p![k]) || isPatterned(p![k])) && props.some((p) => isLiteral(p![k])))
      : [];
    tagCache.set(branches, tags);
  }
  return tags;
}

/**
 * A union (anyOf) reports the errors of every branch. Only the branches whose type the value has
 * say what is wrong with it (an IN list of 1001 values: its length, not "must be string"); when
 * it has none of their types, one error lists them. Unions whose every branch took the value's
 * type (literals: `const`) are left whole for mergeLiteralUnions. A union of objects told apart
 * by literal properties (tagsOf) keeps the branches whose literals the value matches best, the
 * first literal deciding before the next (a condition's `field` says what the operator may be):
 * when every literal of one matches, that branch's errors (`IN` with a string: "/value must be
 * array"); otherwise only the mismatched literals of those branches, which mergeLiteralUnions
 * lists as one "must be one of" line per property (`contact.emails` with `LIKE`: the operators
 * of `contact.emails`, not the fields that take LIKE).
 */
function narrowUnions(errors: ErrorObject[]): ErrorObject[] {
  // Slots in ajv's order (a narrowed error is replaced in place, a dropped one emptied), and each
  // slot indexed under its value's path and every path above it: a union's branch errors are
  // looked up among the errors of its own value, so the work grows with the errors, not their square.
  const slots: (ErrorObject | null)[] = [...errors];
  const under = new Map<string, number[]>();
  errors.forEach((e, i) => {
    for (let path = e.instancePath; ; path = path.slice(0, path.lastIndexOf('/'))) {
      under.get(path)?.push(i) ?? under.set(path, [i]);
      if (!path) break;
    }
  });
  errors.forEach((union, u) => {
    if (union.keyword !== 'anyOf' || slots[u] !== union) return;
    const base = `${union.schemaPath}/`;
    const branches = new Map<string, number[]>();
    for (const i of under.get(union.instancePath)!) {
      const e = slots[i];
      if (i === u || !e?.schemaPath.startsWith(base)) continue;
      const branch = e.schemaPath.slice(base.length).split('/')[0]!;
      branches.get(branch)?.push(i) ?? branches.set(branch, [i]);
    }
    const wrongType = (is: number[]) => is.length === 1 && slots[is[0]!]!.keyword === 'type' && slots[is[0]!]!.instancePath === union.instancePath;
    const missed = [...branches.values()].filter(wrongType);
    if (!missed.length) return narrowTagged(slots, u, branches);
    const types = [...new Set(missed.flatMap(([i]) => String((slots[i!]!.params as { type: string }).type).split(',')))];
    for (const i of missed.flat()) slots[i] = null;
    if (missed.length < branches.size) slots[u] = null;
    else {
      // In the union's place, so an enclosing union finds it among its branch's errors.
      const listed = types.length > 1 ? `${types.slice(0, -1).join(', ')} or ${types[types.length - 1]}` : types[0];
      slots[u] = { ...union, keyword: 'type', message: `must be ${listed}`, params: { type: types.join(',') } };
    }
  });
  return slots.filter((e) => e !== null);
}

/** See narrowUnions: the branches of a union of objects whose literal properties the value matches best. */
function narrowTagged(slots: (ErrorObject | null)[], u: number, branches: Map<string, number[]>): void {
  const union = slots[u]!;
  const tags = tagsOf(union.schema);
  if (!tags.length || !branches.size) return;
  const tagAt = new Map(tags.map((t) => [`${union.instancePath}/${escapePointer(t)}`, t]));
  const tagOf = (e: ErrorObject) =>
    e.instancePath === union.instancePath
      ? e.keyword === 'required' && tags.includes((e.params as { missingProperty: string }).missingProperty)
        ? (e.params as { missingProperty: string }).missingProperty
        : undefined
      : tagAt.get(e.instancePath);
  // a branch's mismatched tags as a number whose highest bit is the first tag: the smallest is the best match
  const rank = (mismatch: Set<string | undefined>) => tags.reduce((n, t) => n * 2 + (mismatch.has(t) ? 1 : 0), 0);
  const mismatched = new Map([...branches].map(([b, is]) => [b, rank(new Set(is.map((i) => tagOf(slots[i]!))))]));
  const best = Math.min(...mismatched.values());
  for (const [b, is] of branches)
    for (const i of is) {
      const e = slots[i]!;
      slots[i] = mismatched.get(b) === best && (best === 0 || tagOf(e) !== undefined) ? onlyWhen(e, union, tags) : null;
    }
  slots[u] = null;
}

/** The literals a discriminator admits in one branch. */
const literalsOf = (s: unknown): unknown[] => {
  const o = s as { const?: unknown; enum?: unknown[]; anyOf?: { const?: unknown }[] };
  return o.const !== undefined ? [o.const] : (o.enum ?? o.anyOf?.map((b) => b.const) ?? []);
};

/**
 * A property the matched branch does not know but another branch of a union with one
 * discriminator does (`options` of a boolean custom field) is not unknown: it is only allowed
 * for the other branches' literals. Read by toDetails (`params.onlyWhen`).
 */
function onlyWhen(e: ErrorObject, union: ErrorObject, tags: string[]): ErrorObject {
  if (e.keyword !== 'additionalProperties' || e.instancePath !== union.instancePath || tags.length !== 1) return e;
  const name = (e.params as { additionalProperty: string }).additionalProperty;
  const tag = tags[0]!;
  const branches = union.schema as { properties: Record<string, unknown> }[];
  const allowed = branches.filter((b) => name in b.properties).flatMap((b) => literalsOf(b.properties[tag])).map((v) => JSON.stringify(v));
  if (!allowed.length) return e;
  const listed = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} or ${allowed[allowed.length - 1]}` : allowed[0];
  return { ...e, params: { ...e.params, onlyWhen: `is only allowed when ${tag} is ${listed}` } };
}

export function toDetails(errors: ErrorObject[] | null | undefined, prefix = ''): ErrorDetail[] {
  const seen = new Set<string>();
  const out: (ErrorDetail & { typeError?: true; whole?: true })[] = [];
  for (const e of narrowUnions(errors ?? [])) {
    let path = prefix + e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'propertyNames') continue; // summary of the name error reported just before
    if (e.propertyName !== undefined) {
      // a key of a keyed record broke its `propertyNames` rule: name the key itself
      path += `/${escapePointer(e.propertyName)}`;
      const pattern = (e.params as { pattern?: string }).pattern;
      message = e.keyword === 'pattern' ? `is not an allowed name: ${(pattern && KEY_RULES.get(pattern)) ?? `must match ${pattern}`}` : `name ${message}`;
    } else if (e.keyword === 'pattern' && VALUE_RULES.has((e.params as { pattern: string }).pattern)) {
      message = VALUE_RULES.get((e.params as { pattern: string }).pattern)!;
    } else if (e.keyword === 'additionalProperties') {
      path += `/${(e.params as { additionalProperty: string }).additionalProperty}`;
      message = (e.params as { onlyWhen?: string }).onlyWhen ?? 'is not a known property';
    } else if (e.keyword === 'required') {
      path += `/${(e.params as { missingProperty: string }).missingProperty}`;
      message = 'is required';
    } else if (e.keyword === 'dependentRequired') {
      const { missingProperty, property } = e.params as { missingProperty: string; property: string };
      path += `/${escapePointer(missingProperty)}`;
      message = `is required when ${property} is sent`;
    } else if (e.keyword === 'const' || e.keyword === 'enum') {
      const allowed = (e.params as { allowedValue?: unknown; allowedValues?: unknown[] }).allowedValues ?? [(e.params as { allowedValue?: unknown }).allowedValue];
      message = `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
      const refusal = (e.parentSchema as { 'x-refusal'?: unknown } | undefined)?.['x-refusal'];
      if (typeof refusal === 'string') message += ` (${refusal})`;
    }
    // A union reports every branch; keep one line per path (the first is the most specific).
    if (e.keyword === 'anyOf' && seen.has(path)) continue;
    const key = `${path}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    seen.add(path);
    out.push(e.keyword === 'type' ? { path: path || '/', message, typeError: true } : e.keyword === 'not' || e.keyword === 'oneOf' ? { path: path || '/', message, whole: true } : { path: path || '/', message });
  }
  // what a combinator says of the whole (`/ must NOT be valid`, `must match exactly one schema in
  // oneOf`) after what names a property (rows beside a file: `/contactsData` first)
  const whole = new Set(out.filter((d) => d.whole));
  return mergeLiteralUnions([...out.filter((d) => !whole.has(d)), ...whole]);
}

/**
 * `field: must be equal to constant` ×N from a union of literals reads better as one line; where
 * such a line lists the literals, "must be string" beside it says nothing more.
 */
function mergeLiteralUnions(all: (ErrorDetail & { typeError?: true })[]): ErrorDetail[] {
  const literalPaths = new Set(all.filter((d) => d.message.startsWith('must be one of ')).map((d) => d.path));
  const details = all.filter((d) => !(d.typeError && literalPaths.has(d.path))).map(({ path, message }) => ({ path, message }));
  const byPath = new Map<string, ErrorDetail[]>();
  for (const d of details) byPath.set(d.path, [...(byPath.get(d.path) ?? []), d]);
  const out: ErrorDetail[] = [];
  for (const [path, ds] of byPath) {
    const consts = ds.filter((d) => d.message.startsWith('must be one of '));
    if (consts.length > 1) {
      // branches share literals (the operators of several field types): each listed once
      const listed = new Set(consts.flatMap((d) => d.message.slice('must be one of '.length).split(', ')));
      out.push({ path, message: `must be one of ${[...listed].join(', ')}` });
      out.push(...ds.filter((d) => !d.message.startsWith('must be one of ') && d.message !== 'must match a schema in anyOf'));
    } else out.push(...ds.filter((d) => !(ds.length > 1 && d.message === 'must match a schema in anyOf')));
  }
  return out;
}


export type Location = 'body' | 'query' | 'params';

/**
 * Number properties of a query string or path that are not in decimal notation: ajv's coercion
 * (`x == +x`) would read `0x10` as 16, where a body's numeric strings are decimal only
 * (numberInput). Top-level properties: query and path schemas are flat.
 */
function nonDecimalNumbers(schema: TSchema, value: unknown, prefix: string): ErrorDetail[] {
  const keys = numberKeysOf(schema);
  if (!keys.length || !value || typeof value !== 'object') return [];
  const out: ErrorDetail[] = [];
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (typeof v === 'string' && Number.isNaN(numberInput(v))) out.push({ path: `${prefix}/${escapePointer(k)}`, message: 'must be a number in decimal notation' });
  }
  return out;
}

/** The number properties of a flat query or path schema, found once per schema (most paths have none). */
const numberKeys = new WeakMap<TSchema, string[]>();
function numberKeysOf(schema: TSchema): string[] {
  let keys = numberKeys.get(schema);
  if (!keys) {
    const props = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
    keys = Object.keys(props).filter((k) => props[k]!.type === 'number' || props[k]!.type === 'integer');
    numberKeys.set(schema, keys);
  }
  return keys;
}

/**
 * An object's `anyOf` rule between its properties that the server answers with a stable error
 * code of its own, named beside it by `x-error-code` (UnifiedDataBody: `pronet_required`): the
 * document states the rule, and the domain check that owns the code answers it, naming what is
 * missing. So when the rule is all that is wrong, the body passes here; with anything else wrong
 * it is one more `validation_failed` detail.
 */
function onlyCodedRules(errors: ErrorObject[]): boolean {
  const rules = errors.filter((e) => e.keyword === 'anyOf' && typeof (e.parentSchema as { 'x-error-code'?: unknown } | undefined)?.['x-error-code'] === 'string');
  return rules.length > 0 && errors.every((e) => rules.some((r) => e === r || (e.schemaPath.startsWith(`${r.schemaPath}/`) && e.instancePath.startsWith(r.instancePath))));
}

/** Validates (and, for query/params, coerces in place); throws 400 `validation_failed`. */
export function validate<T>(schema: TSchema, value: unknown, where: Location): T {
  const fn = compile(schema, where !== 'body');
  const notDecimal = where === 'body' ? [] : nonDecimalNumbers(schema, value, `/${where}`);
  if (notDecimal.length || (!fn(value) && !onlyCodedRules(fn.errors ?? []))) {
    const prefix = where === 'body' ? '' : `/${where}`;
    const details = notDecimal.length ? notDecimal : toDetails(fn.errors, prefix);
    const first = details[0]!;
    const label = where === 'body' ? 'Request body' : where === 'query' ? 'Query string' : 'Path';
    throw new ApiError(400, 'validation_failed', `${label} is invalid: ${first.path} ${first.message}`, details);
  }
  return value as T;
}

/** Throws 400 `validation_failed` naming every unsafe pointer of {@link unsafeInputDetails}. */
export function assertSafeInput(value: unknown, where: Location): void {
  const details = unsafeInputDetails(value, where === 'body' ? '' : `/${where}`);
  if (!details.length) return;
  const label = where === 'body' ? 'Request body' : where === 'query' ? 'Query string' : 'Path';
  throw new ApiError(400, 'validation_failed', `${label} is invalid: ${details[0]!.path} ${details[0]!.message}`, details);
}

/** `%XX` escapes of a byte ≥ 0x80: only these can percent-decode to something that is not UTF-8. */
const HIGH_BYTE_ESCAPE = /%[89a-f][0-9a-f]/i;

/** Whether a query-string name or value percent-decodes to UTF-8 (a `%` not followed by two hex digits is text). */
function percentDecodesToUtf8(component: string): boolean {
  try {
    // decodeURIComponent refuses escapes that are not UTF-8 (overlong forms and surrogates included).
    decodeURIComponent(component.replace(/%(?![0-9a-f]{2})/gi, '%25'));
    return true;
  } catch {
    return false;
  }
}

/** Throws on bytes that are not well-formed UTF-8 (no U+FFFD in their place); stateless between `decode` calls. */
export const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Request bodies (JSON and multipart) are read as sent: a `Content-Encoding` other than
 * `identity` is a 415 `unsupported_media_type`. A corrupt stream would be a decoder error, and a
 * client that aborts mid-body would leave a decoder (and the request) waiting. Content codings are
 * case-insensitive (RFC 9110 §8.4.1), so `IDENTITY` is `identity`; the accepted header is then
 * dropped, because co-body's decoder (inflation) compares it case-sensitively and would refuse it.
 */
export function assertUncompressedBody(req: IncomingMessage): void {
  const declared = req.headers['content-encoding'];
  if (declared === undefined) return;
  const encoding = declared.trim().toLowerCase();
  if (encoding !== 'identity') throw new ApiError(415, 'unsupported_media_type', `Content-Encoding ${encoding} is not supported; send the body uncompressed`);
  delete req.headers['content-encoding'];
}

/**
 * Koa's `ctx.query` (URLSearchParams) decodes `%FF` and other escapes that are not UTF-8 to
 * U+FFFD: such a parameter is refused instead, 400 `validation_failed` naming `/query/<name>`.
 */
export function assertUtf8Query(querystring: string): void {
  if (!HIGH_BYTE_ESCAPE.test(querystring)) return;
  const details: ErrorDetail[] = [];
  for (const pair of querystring.split('&')) {
    if (!HIGH_BYTE_ESCAPE.test(pair)) continue;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    if (percentDecodesToUtf8(rawName) && percentDecodesToUtf8(eq < 0 ? '' : pair.slice(eq + 1))) continue;
    // The name as URLSearchParams decodes it (a U+FFFD where it is not UTF-8 itself).
    const name = [...new URLSearchParams(`${rawName}=`).keys()][0] ?? '';
    details.push({ path: `/query/${escapePointer(name)}`, message: 'is not valid UTF-8 once percent-decoded' });
  }
  if (details.length) throw new ApiError(400, 'validation_failed', `Query string is invalid: ${details[0]!.path} ${details[0]!.message}`, details);
}
