/**
 * ISO 8601 dates and date-times that exist on the calendar. `Date.parse` rolls impossible dates
 * over (`2026-02-30` becomes 2 March, `T24:30` the next day); every date a client sends goes
 * through `parseIsoDate`, which checks that the fields it read are the fields of the instant it
 * returns, and that the instant lies in the years 0001 to 9999 (UTC): PostgreSQL has no year 0
 * (`0000-01-01` is "out of range" in every query that meets it), and beyond 9999 `toISOString`
 * writes `+010000-…`, which it does not read either.
 */

/** Said in the error of a refused date: the range `parseIsoDate` keeps to. */
export const DATE_RANGE_RULE = 'in the years 0001 to 9999 (UTC)';
const FIRST_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z');
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

export interface ParseIsoOptions {
  /** Demand a time and an explicit zone (`Z` or ±hh:mm). */
  requireZone?: boolean;
}

/**
 * The instant, or null when `s` is not an ISO 8601 date(-time), names no real calendar moment, or
 * lies outside {@link DATE_RANGE_RULE}.
 */
export function parseIsoDate(s: unknown, opts: ParseIsoOptions = {}): Date | null {
  if (typeof s !== 'string' || s.length > 40) return null;
  const m = ISO_RE.exec(s);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', sec = '0', , zone] = m;
  if (opts.requireZone && (m[4] === undefined || zone === undefined)) return null;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return null;
  // day within its month (leap years included): the UTC date of those fields must not roll over
  const probe = new Date(Date.UTC(2000, month - 1, day));
  probe.setUTCFullYear(year);
  if (probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day) return null;
  if (zone && zone.toUpperCase() !== 'Z') {
    const z = /^[+-](\d{2}):?(\d{2})$/.exec(zone)!;
    if (Number(z[1]) > 23 || Number(z[2]) > 59) return null;
  }
  const t = Date.parse(s.replace(' ', 'T'));
  return Number.isNaN(t) || t < FIRST_MS || t > LAST_MS ? null : new Date(t);
}
