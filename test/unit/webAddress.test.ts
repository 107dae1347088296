import { describe, expect, it } from 'vitest';
import { decodedPath, isHttpAddress, parseWebAddress } from '../../domain/webAddress.js';
import { normalizeDomain, normalizeProfileUrl } from '../../domain/identity.js';
import { classifyPronetUrl } from '../../domain/sourceRules.js';
import { parsePronetPostUrl } from '../../domain/pronetUrls.js';

describe('parseWebAddress', () => {
  it.each([
    ['https://www.Acme.com:8080/In/x/?q=1#f', { scheme: 'https', authority: 'acme.com:8080', host: 'acme.com', path: '/In/x/' }],
    ['  acme.com/about ', { scheme: null, authority: 'acme.com', host: 'acme.com', path: '/about' }],
    ['HTTP://WWW.LinkedIn.com', { scheme: 'http', authority: 'linkedin.com', host: 'linkedin.com', path: '' }],
    ['https://jane:secret@acme.com/x', { scheme: 'https', authority: 'jane:secret@acme.com', host: 'acme.com', path: '/x' }],
    ['acme.com?utm=1', { scheme: null, authority: 'acme.com', host: 'acme.com', path: '' }],
    ['/in/jane', { scheme: null, authority: '', host: '', path: '/in/jane' }],
  ])('%s', (raw, parts) => {
    expect(parseWebAddress(raw)).toEqual(parts);
  });

  it('is null for blank text', () => {
    expect(parseWebAddress('')).toBeNull();
    expect(parseWebAddress('   ')).toBeNull();
    expect(parseWebAddress(null)).toBeNull();
    expect(parseWebAddress(undefined)).toBeNull();
  });

  it('accepts http(s) links with a dotted host only', () => {
    const ok = (raw: string, schemeRequired = false) => isHttpAddress(parseWebAddress(raw)!, { schemeRequired });
    expect(ok('https://acme.com/x')).toBe(true);
    expect(ok('acme.com/x')).toBe(true);
    expect(ok('acme.com/x', true)).toBe(false);
    expect(ok('ftp://acme.com/x')).toBe(false);
    expect(ok('https://localhost/x')).toBe(false);
    expect(ok('https://acme.com:443/x')).toBe(true);
    expect(ok('https://evil.com\\@linkedin.com/x')).toBe(false);
  });

  it('decodes the path, null on a malformed escape', () => {
    expect(decodedPath(parseWebAddress('https://x.com/in/j%C3%A9r%C3%B4me')!)).toBe('/in/jérôme');
    expect(decodedPath(parseWebAddress('https://x.com/in/%E0%A4%A')!)).toBeNull();
  });
});

/** The regular expressions identity.ts used before parseWebAddress: stored keys were made by these. */
const legacyProfileKey = (raw: string) =>
  raw.trim().toLowerCase().replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/[?#].*$/, '').replace(/^www\./, '').replace(/\/+$/, '') || null;
const legacyDomain = (raw: string) =>
  raw.trim().toLowerCase().replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/^www\./, '').replace(/[/?#:].*$/, '') || null;

describe('matching keys keep the stored form', () => {
  const inputs = [
    'https://www.LinkedIn.com/in/Jane-Doe/?x=1',
    'linkedin.com/in/jane-doe',
    'http://pronet.com/in/jérôme//',
    'pronet.com/in/j%C3%A9r%C3%B4me',
    'https://www.pronet.com:443/company/acme#about',
    'HTTPS://WWW.ACME.COM',
    'www.',
    '/in/x',
    'not a url',
    'acme.com:8080/x',
    'https://www.acme.com/about',
    'Acme.COM',
  ];
  it.each(inputs)('%s', (raw) => {
    expect(normalizeProfileUrl(raw)).toBe(legacyProfileKey(raw));
    expect(normalizeDomain(raw)).toBe(legacyDomain(raw));
  });

  it('a domain drops credentials (the old key kept the user name)', () => {
    expect(normalizeDomain('https://jane@acme.com/x')).toBe('acme.com');
  });
});

describe('the URL readers share the parser', () => {
  it('a malformed escape is no URL rather than a thrown URIError', () => {
    expect(classifyPronetUrl('https://www.pronet.com/in/%E0%A4%A')).toBeNull();
    expect(parsePronetPostUrl('https://www.linkedin.com/feed/update/%E0%A4%A')).toBeNull();
  });

  it('a backslash before @ does not make another host a professional-network host', () => {
    expect(parsePronetPostUrl('https://evil.com\\@www.linkedin.com/feed/update/urn:li:activity:1')).toBeNull();
  });
});
