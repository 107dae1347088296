import { describe, expect, it } from 'vitest';
import { contactCatalog } from '../../domain/contactCatalog.js';
import { checkFieldMapping, companyKey, customValue, mapRow, planFor } from '../../domain/contactMapping.js';

const SCORE = '01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a';
const TAGS = '01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3b';
const catalog = contactCatalog([
  { id: SCORE, label: 'Score', type: 'number' },
  { id: TAGS, label: 'Tags', type: 'multi', options: [{ label: 'A', value: 'a' }, { label: 'B', value: 'b' }] },
]);
const direct = planFor(catalog, undefined);
const mapped = planFor(catalog, [
  { sourceFieldName: 'Mail', targetFieldName: 'contact.workEmail' },
  { sourceFieldName: 'URL', targetFieldName: 'contact.pronet' },
  { sourceFieldName: 'Tags', targetFieldName: `contact.customFields.${TAGS}` },
]);

describe('mapRow', () => {
  it('normalises values, derives fullName and the work email, keys the row by profile', () => {
    const { input, errors } = mapRow(
      { 'contact.firstName': ' Ann ', 'contact.lastName': 'Lee', 'contact.emails': 'A@X.com; b@y.com', 'contact.pronet': 'https://www.pronet.com/in/Ann/', _ORIGIN_: 'zap' },
      catalog,
      direct,
      '/row',
    );
    expect(errors).toEqual([]);
    expect(input).toEqual({
      rowKey: 'p:pronet.com/in/ann',
      origin: 'zap',
      firstName: 'Ann',
      lastName: 'Lee',
      fullName: 'Ann Lee',
      emails: ['a@x.com', 'b@y.com'],
      workEmail: 'a@x.com',
      pronet: 'https://www.pronet.com/in/Ann/',
      pronetKey: 'pronet.com/in/ann',
    });
  });

  it('counts the 2,000-character limit in characters, as the schemas do (an emoji is one)', () => {
    // found by the outsider probe: 1,500 emoji (3,000 UTF-16 units) were refused by the mapping but not by PATCH's schema
    const emoji = '😀'.repeat(1500);
    expect(mapRow({ 'contact.firstName': emoji, 'company.companyName': emoji }, catalog, direct, '').errors).toEqual([]);
    const over = mapRow({ 'contact.firstName': '😀'.repeat(2001), 'company.companyName': 'é'.repeat(2001) }, catalog, direct, '/r');
    expect(over.errors.map((e) => e.message)).toEqual(['must not be longer than 2000 characters', 'must not be longer than 2000 characters']);
  });

  it('keys by _ROW_KEY_, else email, else a content hash that is stable', () => {
    expect(mapRow({ 'contact.firstName': 'A', _ROW_KEY_: 7 }, catalog, direct, '').input!.rowKey).toBe('k:7');
    expect(mapRow({ 'contact.workEmail': 'x@y.com' }, catalog, direct, '').input!.rowKey).toBe('e:x@y.com');
    const h1 = mapRow({ 'contact.firstName': 'A' }, catalog, direct, '').input!.rowKey;
    expect(h1).toMatch(/^h:/);
    expect(mapRow({ 'contact.firstName': 'A', _ORIGIN_: 'other' }, catalog, direct, '').input!.rowKey).toBe(h1);
  });

  it('translates mapped columns, ignores unmapped ones, and type-checks custom values against options', () => {
    const ok = mapRow({ Mail: 'm@x.com', URL: 'pronet.com/in/m', Tags: 'a, b', Junk: 1 }, catalog, mapped, '/contactsData/3');
    expect(ok.input).toMatchObject({ workEmail: 'm@x.com', customFields: { [TAGS]: ['a', 'b'] } });
    const bad = mapRow({ Mail: 'nope', Tags: ['a', 'z'] }, catalog, mapped, '/contactsData/3');
    expect(bad.input).toBeNull();
    expect(bad.errors).toEqual([
      { path: '/contactsData/3/Mail', message: 'nope is not an email address' },
      { path: '/contactsData/3/Tags', message: 'z is not one of a, b' },
    ]);
  });

  it('rejects unknown and read-only keys without a mapping; empty values mean "no value"', () => {
    expect(mapRow({ 'contact.nope': 1 }, catalog, direct, '').errors[0]!.path).toBe('/contact.nope');
    expect(mapRow({ 'contact.updatedAt': 'x' }, catalog, direct, '').errors[0]!.message).toMatch(/read-only/);
    expect(mapRow({ [`contact.customFields.${SCORE}`]: 'ten' }, catalog, direct, '').errors[0]!.message).toMatch(/^must be a number /);
    expect(mapRow({ 'contact.firstName': '', 'contact.lastName': null }, catalog, direct, '/r').errors).toEqual([{ path: '/r', message: 'has no value for any contact field' }]);
    expect(mapRow({ 'contact.firstName': '', 'contact.lastName': 'L' }, catalog, direct, '').input!.firstName).toBeUndefined();
  });
});

describe('customValue', () => {
  const target = (type: 'number' | 'date') => ({ kind: 'custom' as const, id: SCORE, type });
  it('reads numeric strings in decimal notation only', () => {
    for (const v of ['0x10', '0b11', '0o7', '', ' ', 'Infinity', '1e400', 'ten']) expect(customValue(target('number'), v), JSON.stringify(v)).toEqual({ error: expect.stringMatching(/number/) });
    expect(customValue(target('number'), '16')).toBe(16);
    expect(customValue(target('number'), ' -2.5e1 ')).toBe(-25);
  });
  it('keeps dates to the years 0001 to 9999', () => {
    for (const v of ['0000-01-01', '0000-12-31T23:59:59Z', '2026-02-30']) expect(customValue(target('date'), v), v).toEqual({ error: expect.stringMatching(/calendar/) });
    expect(customValue(target('date'), '0000-01-01')).toEqual({ error: expect.stringMatching(/0001 to 9999/) });
    expect(customValue(target('date'), '0001-01-01')).toBe('0001-01-01T00:00:00.000Z');
  });
  it('mapRow names the member holding a hex number', () => {
    expect(mapRow({ [`contact.customFields.${SCORE}`]: '0x10' }, catalog, direct, '/contactsData/0').errors).toEqual([
      { path: `/contactsData/0/contact.customFields.${SCORE}`, message: expect.stringMatching(/number/) },
    ]);
  });
});

describe('field mappings and company keys', () => {
  it('names bad mapping targets', () => {
    expect(checkFieldMapping(catalog, [{ sourceFieldName: 'a', targetFieldName: 'contact.x' }, { sourceFieldName: 'b', targetFieldName: 'contact.createdAt' }], '/m')).toEqual([
      { path: '/m/0/targetFieldName', message: 'unknown field contact.x; see GET /schema/contact' },
      { path: '/m/1/targetFieldName', message: 'contact.createdAt is read-only' },
    ]);
  });
  it('keys companies by domain, else by name', () => {
    expect(companyKey({ companyName: 'Acme', companyWebsite: 'https://www.Acme.com/x' })).toBe('d:acme.com');
    expect(companyKey({ companyName: ' Acme Inc ' })).toBe('n:acme inc');
    expect(companyKey({})).toBeNull();
  });
});
