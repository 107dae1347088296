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
