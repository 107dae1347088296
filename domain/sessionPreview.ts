/**
 * What a session key (an in-app preview, never billed) sees of the discovery dataset: the first
 * `SESSION_PREVIEW_ROWS` rows of a search, no further pages, and contact points masked, so a
 * leaked session key is not free data. Session keys start no job either (api/app.ts refuses them
 * on every route that answers 202).
 */
export const SESSION_PREVIEW_ROWS = 10;

/** `jane.doe@acme.com` → `j***@acme.com`: enough to show an address exists and where, not to use it. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

/** `+1 415 555 0142` → `+* *** *** **42`: every digit but the last two hidden. */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '').length;
  let seen = 0;
  return phone.replace(/\d/g, (d) => (++seen > digits - 2 ? d : '*'));
}

/** A discovery item as a session sees it: `emails`, `emailStatuses[].email` and `phoneNumbers[].number` masked. */
export function previewItem(item: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...item };
  if (Array.isArray(item.emails)) out.emails = item.emails.map((e) => (typeof e === 'string' ? maskEmail(e) : e));
  if (Array.isArray(item.emailStatuses)) {
    out.emailStatuses = item.emailStatuses.map((s: { email?: unknown }) => (s && typeof s.email === 'string' ? { ...s, email: maskEmail(s.email) } : s));
  }
  if (Array.isArray(item.phoneNumbers)) {
    out.phoneNumbers = item.phoneNumbers.map((p: unknown) =>
      typeof p === 'string' ? maskPhone(p) : p && typeof p === 'object' && typeof (p as { number?: unknown }).number === 'string' ? { ...p, number: maskPhone((p as { number: string }).number) } : p,
    );
  }
  return out;
}

/** A page as a session sees it: at most `SESSION_PREVIEW_ROWS` masked rows, no page tokens. */
export function previewPage<P extends { data: Record<string, unknown>[]; meta: { previousToken: string; nextToken: string } }>(page: P): P {
  return { ...page, data: page.data.slice(0, SESSION_PREVIEW_ROWS).map(previewItem), meta: { ...page.meta, previousToken: '', nextToken: '' } };
}
