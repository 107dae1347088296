/**
 * `runFrequency` of a listening source (`PATCH /sources/{id}`): `{numberOfPastDaysToSync,
 * periodicInterval}`, both strings on the wire (API-SPEC). It drives a Temporal Schedule that
 * starts a source pull every `periodicInterval`, each covering the last `numberOfPastDaysToSync`
 * days.
 *
 * Accepted `periodicInterval` forms (case-insensitive):
 * - ISO-8601 durations of days, hours and minutes: `P1D`, `PT6H`, `PT30M`, `P1DT12H`, `P1W`;
 * - shorthand `<n>m`, `<n>h`, `<n>d`, `<n>w`: `30m`, `6h`, `1d`, `2w`.
 * The interval must be between 15 minutes and 90 days.
 */
import { invalidField } from './errors.js';
import { PAST_DAYS_MAX, PAST_DAYS_MIN } from './sourceRules.js';

export const MIN_INTERVAL_MS = 15 * 60_000;
export const MAX_INTERVAL_MS = 90 * 86_400_000;

export interface RunFrequency {
  numberOfPastDaysToSync: string;
  periodicInterval: string;
}

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** Milliseconds of a `periodicInterval`, or null when the string is in neither accepted form. */
export function parseInterval(raw: string): number | null {
  const s = raw.trim().toLowerCase();
  const short = /^(\d{1,6})\s*(m|h|d|w)$/.exec(s);
  if (short) return Number(short[1]) * UNIT_MS[short[2]!]!;
  const iso = /^p(?:(\d{1,4})w)?(?:(\d{1,4})d)?(?:t(?:(\d{1,6})h)?(?:(\d{1,6})m)?)?$/.exec(s);
  if (!iso || s === 'p' || s.endsWith('t')) return null;
  const [, w, d, h, m] = iso;
  if (w === undefined && d === undefined && h === undefined && m === undefined) return null;
  return (Number(w ?? 0) * 7 + Number(d ?? 0)) * 86_400_000 + Number(h ?? 0) * 3_600_000 + Number(m ?? 0) * 60_000;
}

export const PERIODIC_INTERVAL_DESCRIPTION =
  'How often the source is pulled: an ISO-8601 duration of weeks/days/hours/minutes (`P1D`, `PT6H`, `PT30M`, `P1DT12H`, `P1W`) ' +
  'or the shorthand `<n>m`, `<n>h`, `<n>d`, `<n>w` (`30m`, `6h`, `1d`). Between 15 minutes and 90 days.';

/** Validates a `runFrequency` and returns it with its interval in milliseconds. */
export function validateRunFrequency(rf: RunFrequency, pointer = '/runFrequency'): RunFrequency & { intervalMs: number; pastDays: number } {
  const pastDays = Number(rf.numberOfPastDaysToSync);
  if (!/^\d+$/.test(rf.numberOfPastDaysToSync.trim()) || pastDays < PAST_DAYS_MIN || pastDays > PAST_DAYS_MAX) {
    throw invalidField(`${pointer}/numberOfPastDaysToSync`, `must be a whole number of days from "${PAST_DAYS_MIN}" to "${PAST_DAYS_MAX}"`);
  }
  const intervalMs = parseInterval(rf.periodicInterval);
  if (intervalMs === null) {
    throw invalidField(`${pointer}/periodicInterval`, 'must be an ISO-8601 duration (e.g. PT6H, P1D) or <n>m/<n>h/<n>d/<n>w (e.g. 6h, 1d)');
  }
  if (intervalMs < MIN_INTERVAL_MS || intervalMs > MAX_INTERVAL_MS) {
    throw invalidField(`${pointer}/periodicInterval`, 'must be between 15 minutes and 90 days');
  }
  return {
    numberOfPastDaysToSync: String(pastDays),
    periodicInterval: rf.periodicInterval.trim(),
    intervalMs,
    pastDays,
  };
}
