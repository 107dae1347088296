import { expect, it } from 'vitest';
import { SESSION_PREVIEW_ROWS, maskEmail, maskPhone, previewPage } from '../../domain/sessionPreview.js';

it('masks emails to their first letter and domain, phones to their last two digits', () => {
  expect(maskEmail('jane.doe@acme.com')).toBe('j***@acme.com');
  expect(maskEmail('x@a.b@c.example')).toBe('x***@c.example');
  expect(maskEmail('no-at-sign')).toBe('***');
  expect(maskPhone('+1 415 555 0142')).toBe('+* *** *** **42');
  expect(maskPhone('12')).toBe('12');
});

it('cuts a page to the preview rows, drops its tokens and masks every contact point', () => {
  const row = (i: number) => ({ id: String(i), fullName: `P ${i}`, emails: [`p${i}@acme.com`], emailStatuses: [{ email: `p${i}@acme.com`, status: 'valid' }], phoneNumbers: [{ number: '+44 20 7946 0958', type: 'work' }] });
  const page = previewPage({ data: Array.from({ length: 25 }, (_, i) => row(i)), meta: { totalRecords: 25, previousToken: 'a', nextToken: 'b' } });
  expect(page.data).toHaveLength(SESSION_PREVIEW_ROWS);
  expect(page.meta).toEqual({ totalRecords: 25, previousToken: '', nextToken: '' });
  expect(page.data[3]).toEqual({ id: '3', fullName: 'P 3', emails: ['p***@acme.com'], emailStatuses: [{ email: 'p***@acme.com', status: 'valid' }], phoneNumbers: [{ number: '+** ** **** **58', type: 'work' }] });
});
