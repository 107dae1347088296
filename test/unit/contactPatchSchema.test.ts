/**
 * PATCH /contacts/{id} publishes the email rule the server applies (issue 27 item 21): the
 * document allowed any string in `emails`, the server answered 400 "Ä' is not an email address".
 */
import { describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { PatchContactBody } from '../../api/schemas/contacts.js';

describe('PatchContactBody emails', () => {
  it('refuses what the server refuses, allows what it accepts', () => {
    expect(Value.Check(PatchContactBody, { emails: ["Ä'"] })).toBe(false);
    expect(Value.Check(PatchContactBody, { emails: ['a@b'] })).toBe(false);
    expect(Value.Check(PatchContactBody, { emails: ['a b@c.de'] })).toBe(false);
    expect(Value.Check(PatchContactBody, { emails: [' Ada@Example.com '] })).toBe(true);
    expect(Value.Check(PatchContactBody, { workEmail: 'nope' })).toBe(false);
    expect(Value.Check(PatchContactBody, { workEmail: '' })).toBe(true);
    expect(Value.Check(PatchContactBody, { workEmail: null })).toBe(true);
  });
});
