/**
 * Raw rows → contact inputs. A row arrives keyed by catalog paths (`contact.firstName`,
 * `company.companyName`, `contact.customFields.<id>`) or by the columns a source's field mapping
 * names; `_ORIGIN_` (tracing) and `_ROW_KEY_` (the row's stable key in its source) are reserved.
 * Values are checked against the target's type; a bad value is a row error naming the row
 * member, so a batch keeps its good rows.
 *
 * Empty strings and null mean "no value": they never overwrite what a contact already has.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './pagination.js';
import { escapePointer, type ErrorDetail } from './errors.js';
import { normalizeDomain, normalizeEmail, normalizeProfileUrl } from './identity.js';
import type { ContactCatalog, ContactField, WriteTarget } from './contactCatalog.js';
import type { FieldMappingEntry } from './sourceRules.js';
import type { ContactTextKey, WritableCompanyKey } from './contactShape.js';
import { MAX_NUMERIC, NUMERIC_STRING_RULE, numberInput } from './conditions.js';
import { DATE_RANGE_RULE, parseIsoDate } from './dates.js';
import { charCount } from './inputSafety.js';

/** Longer than the 2,000 characters the schemas allow (code points, counted only when the UTF-16 length passes it). */
const tooLong = (s: string) => s.length > 2000 && charCount(s) > 2000;

export const ORIGIN_KEY = '_ORIGIN_';
export const ROW_KEY = '_ROW_KEY_';

/** The company summary's written properties (domain/contactShape.ts), as a source gives them. */
export type CompanyInput = Partial<Record<WritableCompanyKey, string>>;

/** The full name a contact without one gets from its first and last names (null without either). */
export function derivedFullName(first: string | null | undefined, last: string | null | undefined): string | null {
  return first && last ? `${first} ${last}` : first || last || null;
}

/** The companies column of each company input field. */
export const COMPANY_INPUT_COLUMNS = {
  companyName: 'company_name',
  companyWebsite: 'company_website',
  companyIndustry: 'company_industry',
  companyHeadcount: 'company_headcount',
  companyPronet: 'company_pronet',
} as const satisfies Record<keyof CompanyInput, string>;
export const COMPANY_INPUT_FIELDS = Object.keys(COMPANY_INPUT_COLUMNS) as (keyof CompanyInput)[];

/** `companyHeadcount` is a range `<min>-<max>` (API-SPEC company summary), whole numbers, min ≤ max. */
const HEADCOUNT_RANGE_MESSAGE = 'must be a headcount range of the form <min>-<max> (e.g. 51-200)';

/** Why a `companyHeadcount` value is not a range, or null when it is one. */
export function headcountRangeError(s: string): string | null {
  const m = /^(\d{1,10})-(\d{1,10})$/.exec(s);
  if (!m) return HEADCOUNT_RANGE_MESSAGE;
  return Number(m[1]) > Number(m[2]) ? 'must be a headcount range whose min does not exceed its max' : null;
}

/** The Contact's written properties (domain/contactShape.ts) as one row of a source gives them, with its identity keys. */
export interface ContactInput extends Partial<Record<ContactTextKey, string>> {
  /** Stable key of the row in its source: `_ROW_KEY_`, else `p:<pronet key>`, `e:<email>`, `h:<hash>`. */
  rowKey: string;
  origin: string | null;
  pronetKey?: string;
  /** Normalised; the work email first when there is one. */
  emails?: string[];
  customFields?: Record<string, unknown>;
  company?: CompanyInput;
}

/** Which row key feeds which catalog field. */
export interface MappingPlan {
  entries: { sourceKey: string; field: ContactField }[];
  /** The source keys of `entries`. */
  mappedKeys: Set<string>;
  /** Keys that are neither mapped nor catalog paths: `reject` (400) or `ignore`. */
  unknownKeys: 'reject' | 'ignore';
}

export type { FieldMappingEntry } from './sourceRules.js';

/**
 * The plan for a source: its field mapping when it has one (unmapped columns are ignored, catalog
 * paths still apply), else catalog paths only (other keys are a 400).
 */
export function planFor(catalog: ContactCatalog, fieldMapping: FieldMappingEntry[] | undefined | null): MappingPlan {
  const entries: MappingPlan['entries'] = [];
  for (const m of fieldMapping ?? []) {
    const field = catalog.get(m.targetFieldName);
    if (field?.write) entries.push({ sourceKey: m.sourceFieldName, field });
  }
  return { entries, mappedKeys: new Set(entries.map((e) => e.sourceKey)), unknownKeys: fieldMapping && fieldMapping.length ? 'ignore' : 'reject' };
}

/** Checks a field mapping against the catalog; returns the failures (JSON pointers under `base`). */
export function checkFieldMapping(catalog: ContactCatalog, mapping: FieldMappingEntry[], base: string): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  mapping.forEach((m, i) => {
    const f = catalog.get(m.targetFieldName);
    if (!f) out.push({ path: `${base}/${i}/targetFieldName`, message: `unknown field ${m.targetFieldName}; see GET /schema/contact` });
    else if (!f.write) out.push({ path: `${base}/${i}/targetFieldName`, message: `${m.targetFieldName} is read-only` });
  });
  return out;
}

export interface MappedRow {
  input: ContactInput | null;
  errors: ErrorDetail[];
}

const isEmpty = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

export function mapRow(row: unknown, catalog: ContactCatalog, plan: MappingPlan, ptr: string): MappedRow {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return { input: null, errors: [{ path: ptr, message: 'must be an object' }] };
  const nested = flattenRow(row as Record<string, unknown>);
  if (nested && 'error' in nested) return { input: null, errors: [{ path: `${ptr}${nested.error}`, message: 'is given twice (nested and as a dotted key)' }] };
  const r = nested ? nested.flat : (row as Record<string, unknown>);
  /** The member a key names in the row as sent (`/contact/firstName` for a nested one). */
  const pointerOf = (key: string) => `${ptr}${nested?.pointers.get(key) ?? `/${escapePointer(key)}`}`;
  // This runs once per imported row: no per-field objects, pointers built only for errors.
  const input: ContactInput = { rowKey: '', origin: null };
  const keyErrors: ErrorDetail[] = [];
  let valueErrors: ErrorDetail[] | undefined;
  let hasValue = false;
  const apply = (field: ContactField, key: string) => {
    const value = r[key];
    if (isEmpty(value)) return;
    hasValue = true;
    const err = assign(input, field.write!, value);
    if (err) (valueErrors ??= []).push({ path: pointerOf(key), message: err });
  };
  // own keys only: a mapped column named `constructor` must not read the prototype
  for (const e of plan.entries) if (Object.hasOwn(r, e.sourceKey)) apply(e.field, e.sourceKey);
  for (const k in r) {
    if (k === ORIGIN_KEY || k === ROW_KEY || plan.mappedKeys.has(k)) continue;
    const field = catalog.get(k);
    if (field?.write) apply(field, k);
    else if (field) keyErrors.push({ path: pointerOf(k), message: `${k} is read-only` });
    else if (plan.unknownKeys === 'reject') keyErrors.push({ path: pointerOf(k), message: `unknown field ${k}; keys are paths from GET /schema/contact` });
  }
  // Key errors first, then value errors in field order.
  const errors = valueErrors ? keyErrors.concat(valueErrors) : keyErrors;
  const origin = r[ORIGIN_KEY];
  if (!isEmpty(origin)) {
    if (typeof origin !== 'string') errors.push({ path: `${ptr}/${ORIGIN_KEY}`, message: 'must be a string' });
    else input.origin = origin.slice(0, 500);
  }
  const explicitKey = r[ROW_KEY];
  if (!isEmpty(explicitKey) && typeof explicitKey !== 'string' && typeof explicitKey !== 'number')
    errors.push({ path: `${ptr}/${ROW_KEY}`, message: 'must be a string' });
  if (!errors.length && !hasValue) errors.push({ path: ptr || '/', message: 'has no value for any contact field' });
  if (errors.length) return { input: null, errors };

  if (input.workEmail) input.emails = input.emails ? dedupe([input.workEmail, ...input.emails]) : [input.workEmail];
  else if (input.emails?.length) input.workEmail = input.emails[0];
  if (!input.fullName && (input.firstName || input.lastName)) input.fullName = derivedFullName(input.firstName, input.lastName) ?? undefined;
  input.rowKey = !isEmpty(explicitKey)
    ? `k:${String(explicitKey)}`
    : input.pronetKey
      ? `p:${input.pronetKey}`
      : input.emails?.length
        ? `e:${input.emails[0]}`
        : `h:${createHash('sha1').update(canonicalJson({ ...input, rowKey: undefined, origin: undefined })).digest('base64url')}`;
  return { input, errors };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A nested payload (`{"contact": {"firstName": "Ann"}}`, as webhooks send) flattened to dotted
 * paths (`contact.firstName`) before mapping, with the JSON pointer of each flattened key; null
 * when the row has no nested object (the common case costs one pass). Arrays are values, not
 * nesting. A path given both nested and dotted is an error (its pointer).
 */
export function flattenRow(row: Record<string, unknown>): { flat: Record<string, unknown>; pointers: Map<string, string> } | { error: string } | null {
  let any = false;
  for (const k in row) if (isPlainObject(row[k])) any = true;
  if (!any) return null;
  const flat: Record<string, unknown> = {};
  const pointers = new Map<string, string>();
  const walk = (o: Record<string, unknown>, prefix: string, pointer: string): string | null => {
    for (const k of Object.keys(o)) {
      const v = o[k];
      const key = prefix ? `${prefix}.${k}` : k;
      const ptr = `${pointer}/${escapePointer(k)}`;
      if (isPlainObject(v)) {
        const err = walk(v, key, ptr);
        if (err) return err;
        continue;
      }
      if (Object.hasOwn(flat, key)) return ptr;
      flat[key] = v;
      pointers.set(key, ptr);
    }
    return null;
  };
  const error = walk(row, '', '');
  return error ? { error } : { flat, pointers };
}

/**
 * Adds to `columns` each key of a row as mapping sees it (nested objects flattened) that it lacks,
 * with its JSON pointer (`base` + its pointer in the row). Pointers are spelled out only for new
 * keys: a bulk request repeats the same few keys in every row. A row that gives a field twice adds
 * none: it fails alone, as a row error of the job.
 */
export function addRowKeys(row: Record<string, unknown>, base: string, columns: Map<string, string>): void {
  const nested = flattenRow(row);
  if (nested && 'error' in nested) return;
  if (nested) {
    for (const [k, pointer] of nested.pointers) if (!columns.has(k)) columns.set(k, base + pointer);
    return;
  }
  for (const k of Object.keys(row)) if (!columns.has(k)) columns.set(k, `${base}/${escapePointer(k)}`);
}

function dedupe(xs: string[]): string[] {
  return [...new Set(xs)];
}

function str(v: unknown): string | null {
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

/** Emails one contact may carry (as `PATCH /contacts/{id}` allows). */
export const MAX_EMAILS = 50;
/** Values of one multi-value custom field. */
export const MAX_MULTI_VALUES = 100;

function emailList(v: unknown): string[] | string {
  const raw = Array.isArray(v) ? v : typeof v === 'string' ? v.split(/[,;\s]+/) : null;
  if (!raw) return 'must be an array of emails';
  if (raw.length > MAX_EMAILS) return `must not have more than ${MAX_EMAILS} emails`;
  const out: string[] = [];
  for (const e of raw) {
    if (isEmpty(e)) continue;
    const n = typeof e === 'string' ? normalizeEmail(e) : null;
    if (!n || !EMAIL.test(n)) return `${String(e)} is not an email address`;
    out.push(n);
  }
  return out;
}
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Writes one value into the input; returns an error message when the value is invalid. */
function assign(input: Omit<ContactInput, 'rowKey'>, target: WriteTarget, v: unknown): string | null {
  if (target.kind === 'contact') {
    if (target.key === 'emails') {
      const list = emailList(v);
      if (typeof list === 'string') return list;
      const emails = dedupe([...(input.emails ?? []), ...list]);
      if (emails.length > MAX_EMAILS) return `must not have more than ${MAX_EMAILS} emails`;
      input.emails = emails;
      return null;
    }
    const s = str(v);
    if (s === null) return 'must be a string';
    if (tooLong(s)) return 'must not be longer than 2000 characters';
    if (target.key === 'workEmail') {
      const e = normalizeEmail(s);
      if (!e || !EMAIL.test(e)) return `${s} is not an email address`;
      input.workEmail = e;
      return null;
    }
    if (target.key === 'pronet') {
      const key = normalizeProfileUrl(s);
      if (!key) return 'must be a profile URL';
      input.pronetKey = key;
    }
    input[target.key] = s;
    return null;
  }
  if (target.kind === 'company') {
    const s = str(v);
    if (s === null) return 'must be a string';
    if (tooLong(s)) return 'must not be longer than 2000 characters';
    if (target.key === 'companyWebsite' && !normalizeDomain(s)) return 'must be a website URL or domain';
    if (target.key === 'companyHeadcount') {
      const err = headcountRangeError(s);
      if (err) return err;
    }
    (input.company ??= {})[target.key] = s;
    return null;
  }
  const checked = customValue(target, v);
  if (typeof checked === 'object' && checked !== null && 'error' in checked) return String((checked as { error: unknown }).error);
  (input.customFields ??= {})[target.id] = checked;
  return null;
}

/** Type-checks a custom field value; returns the stored value or `{error}`. */
export function customValue(target: Extract<WriteTarget, { kind: 'custom' }>, v: unknown): unknown {
  const allowed = target.options?.map((o) => o.value);
  const inOptions = (x: unknown) => !allowed || allowed.some((a) => a === x);
  switch (target.type) {
    case 'string': {
      const s = str(v);
      if (s === null) return { error: 'must be a string' };
      if (!inOptions(s)) return { error: `must be one of ${allowed!.map(String).join(', ')}` };
      return s;
    }
    case 'number': {
      const n = numberInput(v);
      if (!Number.isFinite(n)) return { error: `must be a number ${NUMERIC_STRING_RULE}` };
      if (Math.abs(n) > MAX_NUMERIC) return { error: `must be between -${MAX_NUMERIC} and ${MAX_NUMERIC}` };
      if (!inOptions(n)) return { error: `must be one of ${allowed!.map(String).join(', ')}` };
      return n;
    }
    case 'date': {
      const d = parseIsoDate(typeof v === 'string' ? v.trim() : v);
      if (!d) return { error: `must be an ISO 8601 date that exists on the calendar, ${DATE_RANGE_RULE}` };
      return d.toISOString();
    }
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      return { error: 'must be a boolean' };
    case 'multi': {
      const raw = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : null;
      if (!raw) return { error: 'must be an array of strings' };
      if (raw.length > MAX_MULTI_VALUES) return { error: `must not have more than ${MAX_MULTI_VALUES} values` };
      const out: string[] = [];
      for (const x of raw) {
        const s = str(x);
        if (s === null) return { error: 'must be an array of strings' };
        if (!inOptions(s)) return { error: `${s} is not one of ${allowed!.map(String).join(', ')}` };
        out.push(s);
      }
      return dedupe(out);
    }
  }
}

/** `d:<domain>` or `n:<lower name>`; null when the company has neither. */
export function companyKey(c: CompanyInput | undefined): string | null {
  if (!c) return null;
  const d = normalizeDomain(c.companyWebsite);
  if (d) return `d:${d}`;
  const n = c.companyName?.trim().toLowerCase();
  return n ? `n:${n}` : null;
}
