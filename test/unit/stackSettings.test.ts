/**
 * The embedded PostgreSQL is durable by default (issue 27, item 22): `npm start` and the chaos
 * tests' stack run it with `synchronous_commit=on` unless an operator names the trade.
 */
import { describe, expect, it } from 'vitest';
import { postgresSettings } from '../../scripts/stack.js';

describe('embedded PostgreSQL settings', () => {
  it('commit synchronously unless PG_SYNCHRONOUS_COMMIT says otherwise', () => {
    expect(postgresSettings({})).toContain('synchronous_commit=on');
    expect(postgresSettings({ PG_SYNCHRONOUS_COMMIT: '' })).toContain('synchronous_commit=on');
    expect(postgresSettings({ PG_SYNCHRONOUS_COMMIT: 'off' })).toContain('synchronous_commit=off');
  });

  it('refuses a value PostgreSQL would not take (a typo never means off)', () => {
    expect(() => postgresSettings({ PG_SYNCHRONOUS_COMMIT: 'of' })).toThrow(/PG_SYNCHRONOUS_COMMIT must be on/);
  });
});
