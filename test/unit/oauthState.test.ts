/** The OAuth `state`: signed, bound to its workspace and provider, expiring. */
import { describe, expect, it } from 'vitest';
import { signOAuthState, verifyOAuthState } from '../../domain/oauthState.js';

const payload = { id: '01a2231e-27e4-7027-bc84-9d0b66df3ab4', workspaceId: '01a2231e-0000-7027-bc84-9d0b66df3ab4', provider: 'microblog' as const, exp: Date.now() + 60_000 };

describe('OAuth state', () => {
  it('round-trips what it signed', () => {
    expect(verifyOAuthState('secret-a', signOAuthState('secret-a', payload))).toEqual(payload);
  });

  it('refuses another secret, an altered payload, an expired state and junk', () => {
    const state = signOAuthState('secret-a', payload);
    expect(verifyOAuthState('secret-b', state)).toBeNull();
    const [, sig] = state.split('.');
    const altered = Buffer.from(JSON.stringify({ i: payload.id, w: 'another-workspace', p: 'microblog', e: payload.exp })).toString('base64url');
    expect(verifyOAuthState('secret-a', `${altered}.${sig}`)).toBeNull();
    expect(verifyOAuthState('secret-a', signOAuthState('secret-a', { ...payload, exp: Date.now() - 1 }))).toBeNull();
    for (const junk of ['', '.', 'a.b.c', 'abc', `${sig}.${sig}`]) expect(verifyOAuthState('secret-a', junk)).toBeNull();
  });
});
