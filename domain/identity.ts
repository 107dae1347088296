/**
 * Normalised keys used to match the same person or company across sources and the dataset.
 * A profile URL is reduced to `host/path` in lower case without `www.`, scheme, query,
 * fragment or trailing slash, so `https://www.LinkedIn.com/in/Jane-Doe/?x=1` and
 * `linkedin.com/in/jane-doe` are one key.
 */
export function normalizeProfileUrl(raw: string | null | undefined): string | null {
  if (!raw) return null;
  let s = raw.trim().toLowerCase();
  if (!s) return null;
  s = s.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  s = s.replace(/[?#].*$/, '');
  s = s.replace(/^www\./, '');
  s = s.replace(/\/+$/, '');
  return s || null;
}

export function normalizeEmail(raw: string | null | undefined): string | null {
  const s = raw?.trim().toLowerCase();
  return s && s.includes('@') ? s : null;
}

/** `https://www.Acme.com/about` → `acme.com`. */
export function normalizeDomain(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const s = raw.trim().toLowerCase().replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/^www\./, '').replace(/[/?#:].*$/, '');
  return s || null;
}
