/**
 * The operator's opt-out list for the global discovery dataset (docs/PRIVACY.md): one identifier
 * per line, in the form data vendors publish — an email, a profile URL or a dataset person id
 * (UUID); blank lines and `#` comments are skipped. Pure: parsing and normalisation only.
 */
import { isUuid } from './ids.js';
import { normalizeEmail, normalizeProfileUrl } from './identity.js';

export interface DatasetOptOutList {
  emails: string[];
  profileUrls: string[];
  personIds: string[];
}

export interface OptOutLineError {
  line: number;
  message: string;
}

/** Sorts each identifier into its kind, normalised (emails lower-cased, URLs as `host/path`). */
export function classifyOptOuts(values: { value: string; line: number }[]): { list: DatasetOptOutList; errors: OptOutLineError[] } {
  const list: DatasetOptOutList = { emails: [], profileUrls: [], personIds: [] };
  const errors: OptOutLineError[] = [];
  for (const { value, line } of values) {
    const v = value.trim();
    const isId: boolean = isUuid(v);
    if (isId) list.personIds.push(v.toLowerCase());
    else if (v.includes('@')) {
      const email = normalizeEmail(v);
      if (email && /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) list.emails.push(email);
      else errors.push({ line, message: 'is not an email address' });
    } else {
      const url = normalizeProfileUrl(v);
      if (url && url.includes('/') && !/\s/.test(url)) list.profileUrls.push(url);
      else errors.push({ line, message: 'is no email, profile URL or dataset person id' });
    }
  }
  const uniq = (a: string[]) => [...new Set(a)];
  return { list: { emails: uniq(list.emails), profileUrls: uniq(list.profileUrls), personIds: uniq(list.personIds) }, errors };
}

/** The identifiers of an opt-out file's text (line numbers from 1). */
export function parseOptOutFile(text: string): { list: DatasetOptOutList; errors: OptOutLineError[] } {
  const values = text
    .split(/\r?\n/)
    .map((value, i) => ({ value: value.replace(/^\uFEFF/, ''), line: i + 1 }))
    .filter(({ value }) => value.trim() !== '' && !value.trim().startsWith('#'));
  return classifyOptOuts(values);
}
