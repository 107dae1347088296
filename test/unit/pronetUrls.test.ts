import { describe, expect, it } from 'vitest';
import { parsePronetPostUrl } from '../../domain/pronetUrls.js';

describe('parsePronetPostUrl', () => {
  it.each([
    ['urn:li:activity:7123456789012345678', 'urn:li:activity:7123456789012345678'],
    ['urn:li:ugcPost:123', 'urn:li:ugcPost:123'],
    ['  urn:li:share:42 ', 'urn:li:share:42'],
    ['https://www.linkedin.com/feed/update/urn:li:activity:123/', 'urn:li:activity:123'],
    ['https://www.linkedin.com/feed/update/urn:li:ugcPost:456', 'urn:li:ugcPost:456'],
    ['https://www.linkedin.com/feed/update/urn:li:share:789/?utm_source=share', 'urn:li:share:789'],
    ['https://www.linkedin.com/feed/update/urn%3Ali%3Aactivity%3A321/', 'urn:li:activity:321'],
    ['https://www.linkedin.com/embed/feed/update/urn:li:share:555', 'urn:li:share:555'],
    ['https://linkedin.com/feed/update/urn:li:activity:1', 'urn:li:activity:1'],
    ['https://www.linkedin.com/posts/jane-doe_some-slug-with-dashes-activity-123-abcd', 'urn:li:activity:123'],
    ['https://www.linkedin.com/posts/acme_launch-ugcPost-98765-Xy_z/', 'urn:li:ugcPost:98765'],
    ['https://de.linkedin.com/posts/name_slug-share-77-q1?trk=public', 'urn:li:share:77'],
    ['https://www.linkedin.com/posts/name_slug-activity-123', 'urn:li:activity:123'],
  ])('%s → %s', (input, urn) => {
    expect(parsePronetPostUrl(input)?.urn).toBe(urn);
  });

  it('returns kind and id', () => {
    expect(parsePronetPostUrl('https://www.linkedin.com/feed/update/urn:li:activity:123/')).toEqual({ urn: 'urn:li:activity:123', kind: 'activity', id: '123' });
  });

  it.each([
    '',
    'not a url',
    'urn:li:person:123',
    'urn:li:activity:abc',
    'https://www.linkedin.com/in/jane-doe',
    'https://www.linkedin.com/feed/',
    'https://www.linkedin.com/feed/update/urn:li:comment:(urn:li:activity:1,2)',
    'https://www.linkedin.com/posts/jane-doe_slug-without-id',
    'https://example.com/feed/update/urn:li:activity:123/',
    'https://linkedin.com.evil.example/feed/update/urn:li:activity:123/',
    'https://lnkd.in/abc123',
    'ftp://www.linkedin.com/feed/update/urn:li:activity:123/',
  ])('rejects %j', (input) => {
    expect(parsePronetPostUrl(input)).toBeNull();
  });
});
