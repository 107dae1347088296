/**
 * Classifies errors of the database drivers (pg, the ORM around it) for callers that answer
 * differently to them: a statement the server cancelled at `statement_timeout`, and a database
 * that is not reachable right now (restarting, failing over, down). Both are looked for along
 * the error's `cause` chain, since the ORM wraps driver errors.
 */

function codes(err: unknown): { code?: string; message: string }[] {
  const out: { code?: string; message: string }[] = [];
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, i = 0; e && typeof e === 'object' && i < 4; e = e.cause as typeof e, i++) {
    out.push({ code: typeof e.code === 'string' ? e.code : undefined, message: typeof e.message === 'string' ? e.message : '' });
  }
  return out;
}

/** SQLSTATE 57014 from `statement_timeout` (not a cancel request, which says "user request"). */
export function isStatementTimeout(err: unknown): boolean {
  return codes(err).some((e) => e.code === '57014' && /statement timeout/i.test(e.message));
}

/** Connection-level failures: every one of them is worth retrying once the database is back. */
const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

export function isDatabaseUnavailable(err: unknown): boolean {
  return codes(err).some(
    (e) =>
      (e.code !== undefined && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) ||
      /^Connection terminated( unexpectedly)?$|^Client has encountered a connection error and is not queryable$/.test(e.message),
  );
}

/** SQLSTATE 55P03 (`lock_not_available`): a row lock not granted within the transaction's `lock_timeout`. */
export function isLockTimeout(err: unknown): boolean {
  return codes(err).some((e) => e.code === '55P03');
}

/** SQLSTATE 23505 (`unique_violation`). */
export function isUniqueViolation(err: unknown): boolean {
  return codes(err).some((e) => e.code === '23505');
}
