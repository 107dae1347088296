/**
 * Recorded workflow histories are frozen per release: `histories/<version>/<workflow>/<case>.json`.
 * Integration tests record into the current version folder only what is missing there; nothing
 * ever overwrites a recorded history (docs/ARCHITECTURE.md, "Changing a workflow"). Cutting a
 * release bumps `CURRENT_HISTORY_VERSION`; the folders of earlier releases stay as they are and
 * the replay test keeps replaying them.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const HISTORIES_DIR = join(import.meta.dirname, 'histories');
export const CURRENT_HISTORY_VERSION = 'v2';

/** Where a history named `<workflow>/<case>` is recorded now. */
export const currentHistoryFile = (name: string) => join(HISTORIES_DIR, CURRENT_HISTORY_VERSION, `${name}.json`);

/** `v3` → 3; anything else is no version (NaN). */
export const versionNumber = (v: string) => (/^v\d+$/.test(v) ? Number(v.slice(1)) : Number.NaN);

/** Every entry at the root of the histories folder, oldest version first (a stray file or folder is the replay test's failure). */
export function historyVersions(): string[] {
  if (!existsSync(HISTORIES_DIR)) return [];
  const order = (v: string) => versionNumber(v) || Number.POSITIVE_INFINITY;
  return readdirSync(HISTORIES_DIR).sort((a, b) => order(a) - order(b) || a.localeCompare(b));
}

/** The history files under a folder, recursively. */
export function historyFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const p = join(dir, f);
      return statSync(p).isDirectory() ? historyFiles(p) : p.endsWith('.json') ? [p] : [];
    });
}
