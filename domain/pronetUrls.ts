/**
 * Resolves the thread an external pronet (LinkedIn) post lives in from what a user pastes: a raw
 * URN (`urn:li:activity:123`, `urn:li:ugcPost:123`, `urn:li:share:123`), a feed URL
 * (`https://www.linkedin.com/feed/update/urn:li:activity:123/`, also URL-encoded and the
 * `/embed/feed/update/...` form) or a vanity post URL
 * (`https://www.linkedin.com/posts/name_slug-activity-123-abcd`). Anything else is `null`.
 */
import { decodedPath, isHttpAddress, parseWebAddress } from './webAddress.js';

export const THREAD_URN_KINDS = ['activity', 'ugcPost', 'share'] as const;
export type ThreadUrnKind = (typeof THREAD_URN_KINDS)[number];

export interface PronetThread {
  /** The URN comments are posted on: `urn:li:<kind>:<id>`. */
  urn: string;
  kind: ThreadUrnKind;
  id: string;
}

const URN_RE = /^urn:li:(activity|ugcPost|share):(\d{1,30})$/;
const URN_IN_PATH_RE = /(?:^|\/)urn:li:(activity|ugcPost|share):(\d{1,30})(?:\/|$)/;
// The vanity form ends with `-<kind>-<digits>-<suffix>`; the slug before it may contain dashes.
const VANITY_RE = /-(activity|ugcPost|share)-(\d{1,30})(?:-[A-Za-z0-9_]+)?\/?$/;

/**
 * What {@link parsePronetPostUrl} resolves, as a JSON Schema pattern (the request schema's): a
 * URN, or an http(s) URL on linkedin.com (or one `www.`-like subdomain) whose path is a feed
 * update holding a URN (`:` also as `%3A`) or a vanity post, with an optional query string. Every
 * string it matches resolves; the parser also takes some forms it leaves out (surrounding
 * whitespace, other percent-encodings).
 */
export const PRONET_POST_URL_PATTERN =
  '^(urn:li:(activity|ugcPost|share):[0-9]{1,30}' +
  '|[Hh][Tt][Tt][Pp][Ss]?://([A-Za-z0-9]+\\.)?[Ll][Ii][Nn][Kk][Ee][Dd][Ii][Nn]\\.[Cc][Oo][Mm]/' +
  '((embed/)?feed/update/urn(:|%3[Aa])li(:|%3[Aa])(activity|ugcPost|share)(:|%3[Aa])[0-9]{1,30}/?' +
  '|posts/[A-Za-z0-9_~-]*-(activity|ugcPost|share)-[0-9]{1,30}(-[A-Za-z0-9_]+)?/?)' +
  '(\\?[A-Za-z0-9_.~%=&+-]*)?)$';

function thread(kind: string, id: string): PronetThread {
  return { urn: `urn:li:${kind}:${id}`, kind: kind as ThreadUrnKind, id };
}

function isPronetHost(host: string): boolean {
  return host === 'linkedin.com' || host.endsWith('.linkedin.com');
}

export function parsePronetPostUrl(input: string): PronetThread | null {
  const raw = input.trim();
  const direct = URN_RE.exec(raw);
  if (direct) return thread(direct[1]!, direct[2]!);

  const address = parseWebAddress(raw);
  if (!address || !isHttpAddress(address, { schemeRequired: true }) || !isPronetHost(address.host)) return null;
  const path = decodedPath(address);
  if (path === null) return null;
  if (/^\/(embed\/)?feed\/update\//.test(path)) {
    const m = URN_IN_PATH_RE.exec(path);
    return m ? thread(m[1]!, m[2]!) : null;
  }
  if (path.startsWith('/posts/')) {
    const m = VANITY_RE.exec(path);
    return m ? thread(m[1]!, m[2]!) : null;
  }
  return null;
}
