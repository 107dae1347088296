/**
 * The one place `LIKE` / `ILIKE` patterns are made from client input (PostgreSQL's default escape
 * character is `\`).
 *
 * - Text searched as text (type-ahead `q`, verified title terms, listening keywords) goes through
 *   `likeContains`: `\`, `%` and `_` are escaped, so any text is a valid pattern.
 * - Condition values of the `LIKE` operator are patterns on purpose (DESIGN §4: `%` any run, `_`
 *   one character, `\` escapes the next character); `likePatternProblem` refuses the one input
 *   PostgreSQL rejects — a pattern ending in an unpaired `\` (SQLSTATE 22025) — so it is a 400
 *   naming the value instead of a 500.
 */

/** Escapes `\`, `%` and `_` so that `s` matches itself literally. */
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Pattern matching any text that contains `s` (literally). */
export const likeContains = (s: string): string => `%${escapeLike(s)}%`;

/** Pattern matching any text that starts with `s` (literally). */
export const likePrefix = (s: string): string => `${escapeLike(s)}%`;

/** Said of a refused `LIKE` pattern (here and by the request schemas' pattern for it). */
export const LIKE_RULE = 'must not end with a single backslash (the escape character); write \\\\ for a literal backslash';

/** Why a client `LIKE` pattern cannot be used, or null when PostgreSQL accepts it. */
export function likePatternProblem(pattern: string): string | null {
  const trailing = /\\+$/.exec(pattern)?.[0].length ?? 0;
  if (trailing % 2 === 1) return LIKE_RULE;
  return null;
}

/** Whether a valid pattern uses a wildcard (an unescaped `%` or `_`). */
export function likeHasWildcard(pattern: string): boolean {
  return /(?:^|[^\\])(?:\\\\)*[%_]/.test(pattern);
}
