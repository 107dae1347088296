/**
 * Opaque, tamper-proof keyset pagination tokens (DESIGN §3). A token carries the sort key of the
 * row it continues from, is HMAC-signed with the server secret, and is bound to the query it
 * came from: used with another filter or sort it is a 400.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from './errors.js';

export interface TokenPayload {
  /** Sort-key values of the boundary row. */
  after: unknown[];
  /** `next` continues after the boundary, `prev` goes back before it. */
  dir: 'next' | 'prev';
}

/**
 * Stable fingerprint of the query a token belongs to (filters, sort, fields; not limit) and of
 * the workspace that got it: another workspace's token is refused like another query's.
 * `scope` is that workspace's id (DATASET_SCOPE for the discovery dataset, which every
 * workspace reads alike).
 */
export function queryFingerprint(scope: string, query: unknown): string {
  return createHash('sha256').update(scope).update('\n').update(canonicalJson(query)).digest('base64url').slice(0, 22);
}
/** The scope of discovery tokens: the dataset is the same for every workspace. */
export const DATASET_SCOPE = 'dataset';

export function canonicalJson(v: unknown): string {
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

export function encodeToken(secret: string, fingerprint: string, payload: TokenPayload): string {
  const body = Buffer.from(JSON.stringify({ q: fingerprint, a: payload.after, d: payload.dir })).toString('base64url');
  const sig = createHmac('sha256', secret).update(body).digest('base64url').slice(0, 32);
  return `${body}.${sig}`;
}

export function decodeToken(secret: string, fingerprint: string, token: string, field = '/paginationToken'): TokenPayload {
  const invalid = (why: string) => badRequest('invalid_pagination_token', `${field}: ${why}`, [{ path: field, message: why }]);
  const [body, sig] = token.split('.');
  if (!body || !sig) throw invalid('is not a pagination token issued by this API');
  const expected = createHmac('sha256', secret).update(body).digest('base64url').slice(0, 32);
  const a = Buffer.from(sig);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw invalid('is not a pagination token issued by this API');
  let parsed: { q: string; a: unknown[]; d: 'next' | 'prev' };
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is malformed');
  }
  if (parsed.q !== fingerprint) throw invalid('belongs to a different query (filters, sort or fields changed) or another workspace');
  return { after: parsed.a, dir: parsed.d };
}

/**
 * Builds `meta` for a page fetched with one extra row: `rows` holds up to limit+1 rows in the
 * requested direction; `keyOf` gives a row's sort key.
 */
export function pageMeta<T>(opts: {
  secret: string;
  fingerprint: string;
  rows: T[];
  limit: number;
  totalRecords: number;
  keyOf: (row: T) => unknown[];
  /** The token the page was requested with (undefined for the first page). */
  from?: TokenPayload;
}): { data: T[]; meta: { totalRecords: number; previousToken: string; nextToken: string } } {
  const { rows, limit, from } = opts;
  const hasMore = rows.length > limit;
  let data = rows.slice(0, limit);
  if (from?.dir === 'prev') data = data.reverse();
  const first = data[0];
  const last = data[data.length - 1];
  const hasNext = from?.dir === 'prev' ? true : hasMore;
  const hasPrev = from ? (from.dir === 'prev' ? hasMore : true) : false;
  const tok = (row: T | undefined, dir: 'next' | 'prev') => (row ? encodeToken(opts.secret, opts.fingerprint, { after: opts.keyOf(row), dir }) : '');
  return {
    data,
    meta: {
      totalRecords: opts.totalRecords,
      previousToken: hasPrev ? tok(first, 'prev') : '',
      nextToken: hasNext ? tok(last, 'next') : '',
    },
  };
}
