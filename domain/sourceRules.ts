/**
 * Business rules of sources (API-SPEC "Sources", DESIGN §4): the per-type rules of
 * `POST /sources`, the identity key that makes a repeated (sourceType, sourceIdentifier) return
 * the existing source, the look-back options of a pull and the `runFrequency` shape.
 *
 * Pure functions: the route validates the envelope with ajv, then calls `validateSourceInput`
 * for the rules that depend on `sourceType`; every failure is a 400 naming the field.
 */
import { InvalidRequestError, invalidField } from './errors.js';
import { normalizeProfileUrl } from './identity.js';
import { CUSTOM_FIELD_PATH_PATTERN } from './contactCatalog.js';
import { decodedPath, isHttpAddress, parseWebAddress } from './webAddress.js';
import { charCount } from './inputSafety.js';

export const SOURCE_TYPES = [
  'pronetInbound',
  'pronetOutbound',
  'pronetPost',
  'pronetKeywordSearch',
  'pronetJobPosting',
  'importFromWebhook',
] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** Source types whose audience is pulled from a listening provider. */
export const LISTENING_SOURCE_TYPES = [
  'pronetInbound',
  'pronetOutbound',
  'pronetPost',
  'pronetKeywordSearch',
  'pronetJobPosting',
] as const satisfies readonly SourceType[];
export type ListeningSourceType = (typeof LISTENING_SOURCE_TYPES)[number];

export function isListeningSourceType(t: string): t is ListeningSourceType {
  return (LISTENING_SOURCE_TYPES as readonly string[]).includes(t);
}

export const REFRESH_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type RefreshStatus = (typeof REFRESH_STATUSES)[number] | null;

/**
 * Look-back window of a pull, in days: any whole number 1–90 (default 1). API-SPEC calls 1, 7,
 * 15, 30, 45, 60 and 90 the interface's options; the field itself is an integer, so every day count
 * in that range is accepted.
 */
export const PAST_DAYS_MIN = 1;
export const PAST_DAYS_MAX = 90;
export const DEFAULT_PAST_DAYS = 1;

export const KEYWORD_MIN_LENGTH = 3;

const CUSTOM_FIELD_PATH = new RegExp(CUSTOM_FIELD_PATH_PATTERN);

/** Profile, company/page, post and activity URL shapes of the professional network. */
const PROFILE_PATH = /^\/(in|pub)\/[^/\s]+$/;
const COMPANY_PATH = /^\/(company|showcase|school|page)\/[^/\s]+$/;
const POST_PATH = /^\/(posts\/[^/\s]+|feed\/update\/urn:li:(activity|share|ugcpost):[0-9a-z_-]+|activity\/[0-9]+)$/;

/**
 * `https://www.host.tld/in/jane-doe/?x=1` → `/in/jane-doe`, or null when the string is not an
 * absolute http(s) URL or a scheme-less `host/path`.
 */
function urlPath(raw: string): string | null {
  if (/\s/.test(raw.trim())) return null;
  const address = parseWebAddress(raw);
  if (!address || !isHttpAddress(address)) return null;
  return decodedPath(address)?.toLowerCase().replace(/\/+$/, '') || null;
}

export type PronetUrlKind = 'profile' | 'company' | 'post';

export function classifyPronetUrl(raw: string): PronetUrlKind | null {
  const path = urlPath(raw);
  if (!path) return null;
  if (PROFILE_PATH.test(path)) return 'profile';
  if (COMPANY_PATH.test(path)) return 'company';
  if (POST_PATH.test(path)) return 'post';
  return null;
}

export interface FieldMappingEntry {
  sourceFieldName: string;
  targetFieldName: string;
}

export interface SourceInput {
  sourceType: SourceType;
  sourceIdentifier?: string | null;
  sourceMeta?: Record<string, unknown>;
}

export interface NormalizedSource {
  sourceType: SourceType;
  /** As given (trimmed) for URL types and webhook sources; null for keyword and job sources. */
  sourceIdentifier: string | null;
  sourceMeta: Record<string, unknown>;
  /**
   * What makes two sources "the same" within a workspace and type: the normalised URL, the
   * normalised search parameters of a keyword or job source, or the webhook source's
   * identifier. Null for a webhook source without identifier (never deduplicated).
   */
  identityKey: string | null;
}

/** Answers whether a `targetFieldName` is a path of the workspace's contact catalog. */
export type CatalogCheck = (path: string) => boolean;

const str = (v: unknown): v is string => typeof v === 'string';

function requireString(meta: Record<string, unknown>, key: string, opts: { required: boolean; minLength?: number }): string | undefined {
  const v = meta[key];
  if (v === undefined || v === null) {
    if (opts.required) throw invalidField(`/sourceMeta/${key}`, 'is required');
    return undefined;
  }
  if (!str(v)) throw invalidField(`/sourceMeta/${key}`, 'must be a string');
  const t = v.trim();
  const min = opts.minLength ?? (opts.required ? 1 : 0);
  if (charCount(t) < min) {
    throw invalidField(`/sourceMeta/${key}`, min === 1 ? 'must not be empty' : `must have at least ${min} characters`);
  }
  return t;
}

/** Validates a field mapping (`[{sourceFieldName, targetFieldName}]`) against the catalog. */
export function validateFieldMapping(value: unknown, pointer: string, inCatalog: CatalogCheck, required: boolean): FieldMappingEntry[] | undefined {
  if (value === undefined || value === null) {
    if (required) throw invalidField(pointer, 'is required');
    return undefined;
  }
  if (!Array.isArray(value)) throw invalidField(pointer, 'must be an array of {sourceFieldName, targetFieldName}');
  if (required && value.length === 0) throw invalidField(pointer, 'must NOT have fewer than 1 items');
  // a row has at most 500 keys of at most 300 characters (UpsertContactBody): nothing longer can match
  if (value.length > 500) throw invalidField(pointer, 'must NOT have more than 500 items');
  const seen = new Set<string>();
  return value.map((m, i) => {
    const at = `${pointer}/${i}`;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw invalidField(at, 'must be an object {sourceFieldName, targetFieldName}');
    const extra = Object.keys(m).find((k) => k !== 'sourceFieldName' && k !== 'targetFieldName');
    if (extra) throw invalidField(`${at}/${extra}`, 'is not a known property');
    const { sourceFieldName, targetFieldName } = m as Record<string, unknown>;
    if (!str(sourceFieldName) || !sourceFieldName.trim()) throw invalidField(`${at}/sourceFieldName`, 'must be a non-empty string');
    if (!str(targetFieldName) || !targetFieldName.trim()) throw invalidField(`${at}/targetFieldName`, 'must be a non-empty string');
    if (sourceFieldName.length > 300) throw invalidField(`${at}/sourceFieldName`, 'must NOT have more than 300 characters');
    // No row may carry this key (domain/inputSafety.ts): a mapping from it could never apply.
    if (sourceFieldName === '__proto__') throw invalidField(`${at}/sourceFieldName`, 'is not allowed: no row may carry this key (it reaches the object prototype)');
    if (targetFieldName.length > 300) throw invalidField(`${at}/targetFieldName`, 'must NOT have more than 300 characters');
    if (!inCatalog(targetFieldName)) {
      // A well-formed custom field path names a field the workspace could have: a 404, like any unknown reference.
      if (CUSTOM_FIELD_PATH.test(targetFieldName)) {
        throw new InvalidRequestError('not_found', `${at}/targetFieldName: ${targetFieldName} is not a custom field of this workspace`, [
          { path: `${at}/targetFieldName`, message: `${targetFieldName} is not a custom field of this workspace (GET /schema/contact lists them)` },
        ]);
      }
      throw invalidField(`${at}/targetFieldName`, `'${targetFieldName}' is not a field of GET /schema/contact`);
    }
    if (seen.has(sourceFieldName)) throw invalidField(`${at}/sourceFieldName`, `'${sourceFieldName}' is mapped twice`);
    seen.add(sourceFieldName);
    return { sourceFieldName, targetFieldName };
  });
}

function keyOf(parts: Array<string | undefined>): string {
  return parts.map((p) => (p ?? '').trim().toLowerCase().replace(/\s+/g, ' ')).join('|');
}

/**
 * Applies the per-type rules of `POST /sources` (and of each item of bulk upsert) and returns
 * the normalised source; throws a 400 naming the offending field otherwise.
 */
export function validateSourceInput(input: SourceInput, inCatalog: CatalogCheck, pointerPrefix = ''): NormalizedSource {
  const meta = { ...(input.sourceMeta ?? {}) };
  const rawId = input.sourceIdentifier;
  const id = str(rawId) ? rawId.trim() : null;
  /** Bulk upsert validates items: their errors name `/sources/<i>/…`. */
  const prefixed = (fn: () => NormalizedSource): NormalizedSource => {
    try {
      return fn();
    } catch (e) {
      const d = e instanceof InvalidRequestError ? e.details?.[0] : undefined;
      if (pointerPrefix && d) throw new InvalidRequestError((e as InvalidRequestError).code, `${pointerPrefix}${d.path}: ${d.message}`, [{ path: `${pointerPrefix}${d.path}`, message: d.message }]);
      throw e;
    }
  };

  const norm = prefixed(() => {
    switch (input.sourceType) {
      case 'pronetInbound':
      case 'pronetOutbound': {
        if (!id) throw invalidField('/sourceIdentifier', `is required for ${input.sourceType} (a profile URL or a company/page URL)`);
        const kind = classifyPronetUrl(id);
        if (kind !== 'profile' && kind !== 'company') {
          throw invalidField('/sourceIdentifier', 'must be a profile URL (…/in/<name>) or a company/page URL (…/company/<name>)');
        }
        return { sourceType: input.sourceType, sourceIdentifier: id, sourceMeta: meta, identityKey: normalizeProfileUrl(id) };
      }
      case 'pronetPost': {
        if (!id) throw invalidField('/sourceIdentifier', 'is required for pronetPost (a post or activity URL)');
        if (classifyPronetUrl(id) !== 'post') {
          throw invalidField('/sourceIdentifier', 'must be a post URL (…/posts/<slug>) or an activity URL (…/feed/update/urn:li:activity:<id>)');
        }
        return { sourceType: 'pronetPost', sourceIdentifier: id, sourceMeta: meta, identityKey: normalizeProfileUrl(id) };
      }
      case 'pronetKeywordSearch': {
        if (id) throw invalidField('/sourceIdentifier', 'must not be given for pronetKeywordSearch (the keyword goes in sourceMeta.keyword)');
        const keyword = requireString(meta, 'keyword', { required: true, minLength: KEYWORD_MIN_LENGTH })!;
        const postedTime = requireString(meta, 'postedTime', { required: false });
        const authorTitle = requireString(meta, 'authorTitle', { required: false });
        requireString(meta, 'sourceName', { required: false });
        meta.keyword = keyword;
        return {
          sourceType: 'pronetKeywordSearch',
          sourceIdentifier: null,
          sourceMeta: meta,
          identityKey: keyOf([keyword, authorTitle, postedTime]),
        };
      }
      case 'pronetJobPosting': {
        if (id) throw invalidField('/sourceIdentifier', 'must not be given for pronetJobPosting (the search goes in sourceMeta)');
        const jobTitle = requireString(meta, 'jobTitle', { required: true })!;
        const jobLocation = requireString(meta, 'jobLocation', { required: true })!;
        const postedTime = requireString(meta, 'postedTime', { required: true })!;
        const jobType = requireString(meta, 'jobType', { required: true })!;
        requireString(meta, 'sourceName', { required: false });
        if (meta.fieldMapping !== undefined) validateFieldMapping(meta.fieldMapping, '/sourceMeta/fieldMapping', inCatalog, false);
        const cfg = meta.config as Record<string, unknown> | undefined;
        if (cfg !== undefined && (typeof cfg !== 'object' || cfg === null || Array.isArray(cfg))) {
          throw invalidField('/sourceMeta/config', 'must be an object');
        }
        if (cfg?.fieldMapping !== undefined) validateFieldMapping(cfg.fieldMapping, '/sourceMeta/config/fieldMapping', inCatalog, false);
        Object.assign(meta, { jobTitle, jobLocation, postedTime, jobType });
        return {
          sourceType: 'pronetJobPosting',
          sourceIdentifier: null,
          sourceMeta: meta,
          identityKey: keyOf([jobTitle, jobLocation, postedTime, jobType]),
        };
      }
      case 'importFromWebhook': {
        // The mapping is optional: without one, pushed rows are keyed by catalog paths
        // (`contact.*`, `company.*`; nested objects flattened) and any other key is a 400.
        const cfg = meta.config;
        if (cfg !== undefined && (typeof cfg !== 'object' || cfg === null || Array.isArray(cfg))) throw invalidField('/sourceMeta/config', 'must be an object');
        validateFieldMapping((cfg as Record<string, unknown> | undefined)?.fieldMapping, '/sourceMeta/config/fieldMapping', inCatalog, false);
        return {
          sourceType: 'importFromWebhook',
          sourceIdentifier: id,
          sourceMeta: meta,
          identityKey: id ? id : null,
        };
      }
      default:
        throw invalidField('/sourceType', `must be one of ${SOURCE_TYPES.join(', ')}`);
    }
  });
  return isListeningSourceType(norm.sourceType) ? { ...norm, sourceMeta: withListeningDisplay(norm.sourceType, norm.sourceIdentifier, norm.sourceMeta) } : norm;
}

/** What a listening source's audience is, by type (`sourceMeta.interactionType` by default). */
export const LISTENING_INTERACTION: Record<ListeningSourceType, string> = {
  pronetInbound: 'inbound engagement',
  pronetOutbound: 'outbound engagement',
  pronetPost: 'post engagement',
  pronetKeywordSearch: 'keyword posts',
  pronetJobPosting: 'job posts',
};

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

/**
 * The display fields of a listening source's `sourceMeta` (API-SPEC Source: `socialName`,
 * `socialHandle`, `platformName`, `interactionType`, `profileImageUrl`), filled from its type and
 * identifier where the client sent none: the handle is the URL's last path segment (or the
 * keyword / job title), the name its `sourceName`, keyword or job title, else the handle until the
 * first pull learns the real name (db/sources.ts `learnSourceDisplay`). `profileImageUrl` is only
 * ever learned. Values the client sent are kept.
 */
export function withListeningDisplay(type: ListeningSourceType, identifier: string | null, meta: Record<string, unknown>): Record<string, unknown> {
  const out = { ...meta };
  const segment = identifier ? urlPath(identifier)?.split('/').filter(Boolean).at(-1) : undefined;
  const handle = segment ?? (nonEmpty(meta.keyword) ? meta.keyword : nonEmpty(meta.jobTitle) ? meta.jobTitle : undefined);
  if (!nonEmpty(out.platformName)) out.platformName = 'pronet';
  if (!nonEmpty(out.interactionType)) out.interactionType = LISTENING_INTERACTION[type];
  if (!nonEmpty(out.socialHandle) && handle) out.socialHandle = handle;
  if (!nonEmpty(out.socialName)) {
    const name = [meta.sourceName, meta.keyword, meta.jobTitle].find(nonEmpty) ?? handle;
    if (name) out.socialName = name;
  }
  return out;
}

/** Merges a partial `sourceMeta` into the stored one (`null` removes a key). */
export function mergeSourceMeta(stored: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...stored };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** The window a pull covers: `[until - days, until)`. */
export function pullWindow(days: number, until: Date): { since: string; until: string } {
  return { since: new Date(until.getTime() - days * 86_400_000).toISOString(), until: until.toISOString() };
}
