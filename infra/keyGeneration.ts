/**
 * API key material, shared by the API (authentication hashes the key it receives) and `db/`
 * (issuing keys for workspaces and sessions, the admin CLI): keys are random, shown once and
 * stored only as their SHA-256 hash; the prefix names the kind and is kept for display.
 */
import { hash, randomBytes } from 'node:crypto';
import type { KeyKind } from '../db/platform.js';

const PREFIX: Record<KeyKind, string> = { workspace: 'cdk_ws', user: 'cdk_us', session: 'cdk_ss' };

/** One-shot `crypto.hash` (every authenticated request hashes its key): half the cost of `createHash`. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function newApiKey(kind: KeyKind): { key: string; hash: string; prefix: string } {
  const key = `${PREFIX[kind]}_${randomBytes(24).toString('base64url')}`;
  return { key, hash: hashKey(key), prefix: key.slice(0, 12) };
}
