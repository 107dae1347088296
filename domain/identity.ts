/**
 * Normalised keys used to match the same person or company across sources and the dataset.
 * A profile URL is reduced to `host/path` in lower case without `www.`, scheme, query,
 * fragment or trailing slash, so `https://www.LinkedIn.com/in/Jane-Doe/?x=1` and
 * `linkedin.com/in/jane-doe` are one key.
 */
import { parseWebAddress } from './webAddress.js';

export function normalizeProfileUrl(raw: string | null | undefined): string | null {
  const a = parseWebAddress(raw);
  return (a && (a.authority + a.path.toLowerCase()).replace(/\/+$/, '')) || null;
}

export function normalizeEmail(raw: string | null | undefined): string | null {
  const s = raw?.trim().toLowerCase();
  return s && s.includes('@') ? s : null;
}

/** `https://www.Acme.com/about` → `acme.com`. */
export function normalizeDomain(raw: string | null | undefined): string | null {
  return parseWebAddress(raw)?.host || null;
}
